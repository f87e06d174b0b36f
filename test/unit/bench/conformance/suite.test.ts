/** The suite's selection and command line: the focus on exactly some specs, and the flags e2e.test gets. */
import {
  focusOn,
  literalPattern,
  REFUSED_BY_DESIGN,
  SELECTION,
  suiteArguments,
} from "../../../../bench/conformance/suite.js";

describe("focusOn", () => {
  test("GIVEN spec names with brackets, dots and parentheses WHEN focused on THEN each matches itself literally, and nothing else", () => {
    const names = [
      "[sig-node] Pods should get a host IP [NodeConformance] [Conformance]",
      "[sig-storage] Downward API volume should provide node allocatable (cpu) as default cpu limit if the limit is not set [NodeConformance] [Conformance]",
    ];

    const focus = new RegExp(focusOn(names));

    for (const name of names) expect(focus.test(name)).toBe(true);
    expect(focus.test("[sig-node] Pods should get a host IP [NodeConformance] [Conformance")).toBe(false);
    expect(literalPattern("a.b*c")).toBe(String.raw`a\.b\*c`);
  });

  test("GIVEN no name WHEN focused on THEN it refuses: an empty focus would select every spec", () => {
    expect(() => focusOn([])).toThrow("conformance: no spec to focus on");
  });
});

describe("SELECTION", () => {
  test("GIVEN the describe blocks of the yardstick WHEN matched THEN theirs are in, and blocks whose name only starts alike stay out", () => {
    const focus = new RegExp(SELECTION.focus);

    expect(
      focus.test("[sig-node] Downward API should provide pod UID as env vars [NodeConformance] [Conformance]"),
    ).toBe(true);
    expect(
      focus.test("[sig-storage] Downward API volume should provide podname only [NodeConformance] [Conformance]"),
    ).toBe(true);
    expect(focus.test("[sig-network] Services should serve a basic endpoint from pods [Conformance]")).toBe(true);
    expect(focus.test("[sig-node] PodTemplates should run the lifecycle of PodTemplates [Conformance]")).toBe(false);
    expect(
      focus.test("[sig-network] ServiceCIDR and IPAddress API should support CIDR API operations [Conformance]"),
    ).toBe(false);
    expect(focus.test("[sig-network] EndpointSlice should create Endpoints [Conformance]")).toBe(false);
    expect(focus.test("[sig-apps] Deployment deployment should support rollover [Conformance]")).toBe(true);
    expect(
      focus.test("[sig-apps] StatefulSet Basic StatefulSet functionality [StatefulSetBasic] should list [Conformance]"),
    ).toBe(true);
    expect(focus.test("[sig-storage] Projected configMap should be consumable [Conformance]")).toBe(true);
    expect(focus.test("[sig-storage] PersistentVolumes CSI Conformance Test should run [Conformance]")).toBe(true);
    expect(focus.test("[sig-apps] DaemonSet should run and stop simple daemon [Conformance]")).toBe(false);
    expect(focus.test("[sig-apps] CronJob should schedule multiple jobs concurrently [Conformance]")).toBe(false);
    expect(focus.test("[sig-storage] CSIInlineVolumes should support CSIVolumeSource [Conformance]")).toBe(false);
  });
});

describe("SELECTION.skip", () => {
  test("GIVEN the selected specs WHEN skipped THEN the serial, disruptive and refused-by-design ones are, and the other Job specs are not", () => {
    const skip = new RegExp(SELECTION.skip);

    for (const name of Object.keys(REFUSED_BY_DESIGN)) expect(skip.test(`${name} [Conformance]`)).toBe(true);
    expect(skip.test("[sig-apps] Job should delete a job [Conformance]")).toBe(false);
    expect(skip.test("[sig-node] Pods should be updated [NodeConformance] [Conformance]")).toBe(false);
    expect(skip.test("[sig-apps] Daemon set [Serial] should run and stop simple daemon [Conformance]")).toBe(true);
  });
});

describe("suiteArguments", () => {
  test("GIVEN a run against a cluster WHEN its command line is made THEN it has the cluster, the selection, the report directory and no dry run", () => {
    const args = suiteArguments({
      e2eTest: "/c/e2e.test",
      kubeconfig: "/lab/admin.conf",
      kubectl: "/c/kubectl",
      reportDir: "/out/virtual",
    });

    expect(args).toEqual([
      "--kubeconfig=/lab/admin.conf",
      "--provider=skeleton",
      "--kubectl-path=/c/kubectl",
      "--report-dir=/out/virtual",
      `--ginkgo.focus=${SELECTION.focus}`,
      `--ginkgo.skip=${SELECTION.skip}`,
      "--ginkgo.label-filter=Conformance",
      "--ginkgo.timeout=6h",
      "--ginkgo.no-color",
      "--ginkgo.v",
    ]);
  });

  test("GIVEN a dry run with its own focus WHEN its command line is made THEN it names no cluster and lists only", () => {
    const args = suiteArguments({ e2eTest: "e", kubectl: "k", reportDir: "/r", focus: "x", dryRun: true });

    expect(args).not.toContainEqual(expect.stringMatching(/^--kubeconfig/));
    expect(args).toContain("--ginkgo.focus=x");
    expect(args.at(-1)).toBe("--ginkgo.dry-run");
  });
});
