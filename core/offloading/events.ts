/**
 * What a kubelet would report as events, for an offloaded pod: the events of the provider's pod
 * (image pulls and their errors, probe failures, back-off, kills) copied onto the consumer's pod,
 * so that `kubectl describe pod` and `kubectl get events` on the consumer show them.
 *
 * The provider writes those events, and whoever administers it can write any: each is checked and
 * bounded before the consumer stores it (pure, no I/O). It must name the provider's pod by its uid
 * (an event about another object, or an older pod of the same name, is not copied); its reason is
 * kept only if it reads like one; its message is cut to {@link MAX_EVENT_MESSAGE} characters,
 * control characters removed; its type is `Normal` or else `Warning`; its time is the provider's
 * only when it is not in the future. The copy's name derives from the provider event's uid and
 * count, so a copy is made once per occurrence, also across restarts of the agent.
 */
import { createHash } from "node:crypto";
import type { CoreV1Event, V1Pod } from "@kubernetes/client-node";

/** The longest message copied; the rest is cut, marked with an ellipsis. */
export const MAX_EVENT_MESSAGE = 1024;

/** The most events copied per pod per pass, newest first: a provider cannot flood the consumer. */
export const MAX_EVENTS_PER_POD = 20;

/** The component the copies are reported by. */
export const REFLECTED_EVENT_SOURCE = "pulumi-liqo-agent (provider)";

/** A reason as Kubernetes components write them (`Failed`, `BackOff`, `ErrImageNeverPull`). */
const REASON = /^[A-Za-z][A-Za-z0-9]{0,63}$/;

/** The name of the consumer's copy of `remote` on pod `podName`. */
export function reflectedEventName(podName: string, remote: CoreV1Event): string {
  const occurrence = `${remote.metadata?.uid ?? ""}/${remote.count ?? 1}`;
  return `${podName}.${createHash("sha256").update(occurrence).digest("hex").slice(0, 16)}`;
}

/** `text` without control characters, cut to `max` characters. */
function bounded(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex -- removing them is the point
  const clean = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "");
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

/** The provider's time of `remote` when it is a date not after `now`; else `now`. */
function whenOf(remote: CoreV1Event, now: Date): Date {
  const candidate = remote.lastTimestamp ?? remote.eventTime ?? remote.firstTimestamp;
  const time = candidate ? new Date(candidate as unknown as string) : undefined;
  return time && !Number.isNaN(time.getTime()) && time.getTime() <= now.getTime() ? time : now;
}

/**
 * The consumer's copy of provider event `remote` on consumer pod `pod`, whose provider pod is
 * `remotePod`; undefined when `remote` is not about that very pod.
 */
export function reflectedEvent(remote: CoreV1Event, pod: V1Pod, remotePod: V1Pod, now: Date): CoreV1Event | undefined {
  const about = remote.involvedObject;
  if (about?.kind !== "Pod" || !remotePod.metadata?.uid || about.uid !== remotePod.metadata.uid) return undefined;
  const { name, namespace, uid } = pod.metadata!;
  const when = whenOf(remote, now);
  return {
    metadata: { name: reflectedEventName(name!, remote), namespace },
    involvedObject: {
      apiVersion: "v1",
      kind: "Pod",
      name,
      namespace,
      uid,
      ...(about.fieldPath && about.fieldPath.length <= 256 ? { fieldPath: about.fieldPath } : {}),
    },
    reason: remote.reason && REASON.test(remote.reason) ? remote.reason : "ProviderEvent",
    message: bounded(remote.message ?? "", MAX_EVENT_MESSAGE),
    type: remote.type === "Normal" ? "Normal" : "Warning",
    source: { component: REFLECTED_EVENT_SOURCE },
    firstTimestamp: when,
    lastTimestamp: when,
    count: 1,
  };
}

/**
 * The copies to make on `pod` of the provider's events `remoteEvents`: those about `remotePod`,
 * newest first, at most {@link MAX_EVENTS_PER_POD}, without those `made` already holds (by name).
 */
export function eventsToReflect(
  remoteEvents: readonly CoreV1Event[],
  pod: V1Pod,
  remotePod: V1Pod,
  made: ReadonlySet<string>,
  now: Date,
): CoreV1Event[] {
  return remoteEvents
    .map((remote) => reflectedEvent(remote, pod, remotePod, now))
    .filter((copy): copy is CoreV1Event => copy !== undefined && !made.has(copy.metadata!.name!))
    .sort((x, y) => (y.lastTimestamp as Date).getTime() - (x.lastTimestamp as Date).getTime())
    .slice(0, MAX_EVENTS_PER_POD);
}
