import type { CoreV1Event, V1Pod } from "@kubernetes/client-node";
import {
  eventsToReflect,
  MAX_EVENT_MESSAGE,
  MAX_EVENTS_PER_POD,
  reflectedEvent,
  reflectedEventName,
} from "../../../../core/offloading/events.js";

const now = new Date("2026-11-25T12:00:00Z");
const pod: V1Pod = { metadata: { name: "web-1", namespace: "shop", uid: "consumer-uid" } };
const remotePod: V1Pod = { metadata: { name: "web-1", namespace: "shop-c1", uid: "provider-uid" } };
const event = (over: Partial<CoreV1Event> = {}, uid = "e1"): CoreV1Event => ({
  metadata: { name: `web-1.${uid}`, namespace: "shop-c1", uid },
  involvedObject: {
    kind: "Pod",
    name: "web-1",
    namespace: "shop-c1",
    uid: "provider-uid",
    fieldPath: "spec.containers{app}",
  },
  reason: "ErrImageNeverPull",
  message: 'Container image "nope" is not present with pull policy of Never',
  type: "Warning",
  count: 1,
  lastTimestamp: new Date("2026-11-25T11:59:00Z"),
  ...over,
});

describe("provider events copied onto the consumer's pod", () => {
  test("GIVEN an event of the provider's pod THEN the copy names the consumer's pod and keeps reason, message, type and time", () => {
    expect(reflectedEvent(event(), pod, remotePod, now)).toEqual({
      metadata: { name: reflectedEventName("web-1", event()), namespace: "shop" },
      involvedObject: {
        apiVersion: "v1",
        kind: "Pod",
        name: "web-1",
        namespace: "shop",
        uid: "consumer-uid",
        fieldPath: "spec.containers{app}",
      },
      reason: "ErrImageNeverPull",
      message: 'Container image "nope" is not present with pull policy of Never',
      type: "Warning",
      source: { component: "pulumi-liqo-agent (provider)" },
      firstTimestamp: new Date("2026-11-25T11:59:00Z"),
      lastTimestamp: new Date("2026-11-25T11:59:00Z"),
      count: 1,
    });
  });

  test("GIVEN an event about another object, or an older pod of the same name THEN nothing is copied", () => {
    const other = event({ involvedObject: { kind: "Pod", name: "web-1", uid: "old-uid" } });
    expect(reflectedEvent(other, pod, remotePod, now)).toBeUndefined();
    expect(
      reflectedEvent(event({ involvedObject: { kind: "Node", uid: "provider-uid" } }), pod, remotePod, now),
    ).toBeUndefined();
  });

  test("GIVEN a hostile event THEN the copy is bounded: message cut and cleaned, reason and type normalised, time not in the future", () => {
    const copy = reflectedEvent(
      event({
        reason: "Owned; rm -rf",
        message: `a\u0000b\u001b[31m${"x".repeat(100_000)}`,
        type: "Critical",
        lastTimestamp: new Date("2099-01-01T00:00:00Z"),
      }),
      pod,
      remotePod,
      now,
    )!;
    expect(copy.reason).toBe("ProviderEvent");
    expect(copy.type).toBe("Warning");
    expect(copy.message).toHaveLength(MAX_EVENT_MESSAGE);
    expect(copy.message!.startsWith("ab[31m")).toBe(true);
    expect(copy.message!.endsWith("…")).toBe(true);
    expect(copy.lastTimestamp).toEqual(now);
  });

  test("GIVEN a repeated event THEN each occurrence has its own copy; the same occurrence the same name", () => {
    expect(reflectedEventName("web-1", event({ count: 2 }))).not.toBe(reflectedEventName("web-1", event()));
    expect(reflectedEventName("web-1", event())).toBe(reflectedEventName("web-1", event()));
  });

  test("GIVEN many events THEN at most the newest few are copied, and none made before", () => {
    const many = Array.from({ length: MAX_EVENTS_PER_POD + 10 }, (_, i) =>
      event({ lastTimestamp: new Date(now.getTime() - (i + 1) * 1000) }, `e${i}`),
    );
    const copies = eventsToReflect(many, pod, remotePod, new Set(), now);
    expect(copies).toHaveLength(MAX_EVENTS_PER_POD);
    expect(copies[0]!.metadata!.name).toBe(reflectedEventName("web-1", many[0]!));
    const made = new Set([copies[0]!.metadata!.name!]);
    expect(eventsToReflect(many, pod, remotePod, made, now).map((c) => c.metadata!.name)).not.toContain(
      copies[0]!.metadata!.name,
    );
  });
});
