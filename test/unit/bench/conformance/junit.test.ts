/** Ginkgo's JUnit report read into one result per spec: statuses, times, failure reasons, suite nodes left out. */
import { decodeXml, parseJUnit } from "../../../../bench/conformance/junit.js";

/** A report of the shape e2e.test writes: suite nodes, a passed, a failed and a skipped spec. */
const REPORT = `<?xml version="1.0" encoding="UTF-8"?>
  <testsuites tests="4" disabled="1" errors="0" failures="1" time="40.5">
      <testsuite name="Kubernetes e2e suite" package="/tmp" tests="4" skipped="1" failures="1" time="40.5">
          <testcase name="[SynchronizedBeforeSuite]" classname="Kubernetes e2e suite" status="passed" time="1.2"></testcase>
          <testcase name="[It] [sig-node] Pods should get a host IP [NodeConformance] [Conformance]" status="passed" time="8.25">
              <system-err>STEP: creating pod</system-err>
          </testcase>
          <testcase name="[It] [sig-network] DNS should provide DNS for services  [Conformance]" status="failed" time="30.75">
              <failure
                message="[FAILED] Unable to read wheezy_udp@dns-test-service from pod dns-1234/dns-test-&lt;x&gt;:&#xA;  the server could not find it"
                type="failed">[FAILED] long text
              </failure>
              <system-err>STEP: looking up</system-err>
          </testcase>
          <testcase name="[It] [sig-storage] Secrets should be immutable if &#x60;immutable&#x60; field is set [Conformance]"
            status="skipped" time="0">
              <skipped message="skipped"></skipped>
          </testcase>
          <testcase name="[ReportAfterSuite] Kubernetes e2e suite report" classname="Kubernetes e2e suite" status="passed" time="0"/>
      </testsuite>
  </testsuites>`;

describe("parseJUnit", () => {
  test("GIVEN e2e.test's report WHEN read THEN each spec comes with its status, time and failure reason, suite nodes left out", () => {
    expect(parseJUnit(REPORT, "junit_01.xml")).toEqual([
      {
        name: "[sig-node] Pods should get a host IP [NodeConformance] [Conformance]",
        status: "passed",
        seconds: 8.25,
      },
      {
        name: "[sig-network] DNS should provide DNS for services  [Conformance]",
        status: "failed",
        seconds: 30.75,
        reason:
          "[FAILED] Unable to read wheezy_udp@dns-test-service from pod dns-1234/dns-test-<x>: the server could not find it",
      },
      {
        name: "[sig-storage] Secrets should be immutable if `immutable` field is set [Conformance]",
        status: "skipped",
        seconds: 0,
      },
    ]);
  });

  test("GIVEN a failure whose message is empty, as e2e.test writes it WHEN read THEN its text is the reason", () => {
    const xml =
      `<testsuite><testcase name="[It] [sig-node] Pods should get a host IP" status="failed" time="124.6">` +
      `<failure message="" type="failed">[FAILED] Gave up waiting for hostIP of pod p after 120.1 seconds&#xA;` +
      `In [It] at: /go/test/e2e/common/node/pods.go:90 @ 11/26/26 15:17:06.36&#xA;</failure>` +
      `<system-err>&gt; Enter [BeforeEach]</system-err></testcase></testsuite>`;

    expect(parseJUnit(xml, "junit_01.xml")[0]!.reason).toBe(
      "[FAILED] Gave up waiting for hostIP of pod p after 120.1 seconds In [It] at: /go/test/e2e/common/node/pods.go:90 @ 11/26/26 15:17:06.36",
    );
  });

  test("GIVEN a testcase without a status attribute WHEN read THEN its failure child says it failed", () => {
    const xml = `<testsuite><testcase name="[It] x" time="1"><failure message="boom"/></testcase></testsuite>`;

    expect(parseJUnit(xml, "old.xml")).toEqual([{ name: "x", status: "failed", seconds: 1, reason: "boom" }]);
  });

  test("GIVEN a text that is no report WHEN read THEN the error names the file", () => {
    expect(() => parseJUnit("e2e.test: panic", "/out/junit_01.xml")).toThrow(
      "conformance: /out/junit_01.xml is not a JUnit report (no <testsuite>)",
    );
  });
});

describe("decodeXml", () => {
  test("GIVEN named, decimal and hexadecimal references WHEN decoded THEN each is its character; an unknown one stays", () => {
    expect(decodeXml("&lt;a&gt; &amp; &quot;b&quot; &apos;c&apos; &#65;&#x42; &nbsp;")).toBe(`<a> & "b" 'c' AB &nbsp;`);
  });
});
