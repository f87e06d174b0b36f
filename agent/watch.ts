/**
 * Watches that wake the agent's loops: a loop lists what it needs each pass, and a watch on the
 * same collection only says "something changed, pass now". Each watch resumes from the last
 * resourceVersion it saw when the connection ends (client-node ends an idle one after 30 s), so an
 * idle cluster costs one request a collection every 30 s. A watch that cannot resume (410 Gone,
 * the collection not installed yet, a network error) starts over after a pause and wakes its
 * loop, which relists: nothing is ever missed, at worst found a pause later. The pause is the
 * agent's backoff (backoff.ts), reset once a connection delivers an event; its reason is reported.
 */
import * as k8s from "@kubernetes/client-node";
import { describeKubeError } from "../core/kube/errors.js";
import { AGENT_BACKOFF, Backoff, type BackoffPolicy } from "./backoff.js";
import { abortableDelay } from "./loop.js";
import type { Reporter } from "./reporter.js";

/**
 * Cuts short the pause of every watch waiting to start over: a watch on a collection that is not
 * installed yet waits, and the install is seen first by a watch that works before it (the
 * system namespace's Secrets).
 */
export class RetryNow {
  private readonly waiting = new Set<() => void>();

  /** Every waiting watch starts over now. */
  kick(): void {
    for (const resume of [...this.waiting]) resume();
  }

  /** Sleeps `ms`, less if kicked or aborted. */
  async sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const cut = new AbortController();
    const resume = (): void => cut.abort();
    this.waiting.add(resume);
    signal.addEventListener("abort", resume, { once: true });
    try {
      await abortableDelay(ms, cut.signal);
    } finally {
      this.waiting.delete(resume);
      signal.removeEventListener("abort", resume);
    }
  }
}

/** Options of {@link wakeOnChanges}. */
export interface WatchOptions {
  /** Ends the watch. */
  readonly signal: AbortSignal;
  /** How the pause before starting over after a failure grows. @default {@link AGENT_BACKOFF} */
  readonly backoff?: BackoffPolicy;
  /** Where the reason of a failed watch is reported. @default nowhere */
  readonly reporter?: Reporter;
  /** Cuts that pause short. */
  readonly retryNow?: RetryNow;
  /** Which events wake: all but bookmarks unless given. */
  readonly relevant?: (type: string, object: unknown) => boolean;
  /** Watch only the objects with these labels (a label selector), so that the API server filters. */
  readonly labelSelector?: string;
}

/** How one watch connection ended. */
type Ended = { readonly error: unknown };

/** Whether a watch ended the ordinary way (idle timeout, server closed it): resume at once. */
function isOrdinaryEnd(error: unknown): boolean {
  return (
    error === null ||
    error === undefined ||
    (error as Error).name === "TimeoutError" ||
    (error as Error).name === "AbortError"
  );
}

/** Pause before a watch that ended quietly without a resource version starts over from a fresh list. */
const QUIET_RESTART_MS = 5000;

/** A watched object as {@link stateChanges} reads it. */
export interface WatchedObject {
  readonly metadata?: { readonly uid?: string; readonly name?: string };
}

/**
 * A {@link WatchOptions.relevant} filter that lets an event through when what `state` makes of its
 * object differs from that object's last event (objects told apart by `key`, their uid unless
 * given): a new object, a deleted one, and a change of that state wake; any other write (a status
 * its own agent or a kubelet rewrote) does not. The states kept are those of the objects alive.
 */
export function stateChanges<T extends WatchedObject>(
  state: (object: T) => string,
  key: (object: T) => string | undefined = (object) => object.metadata?.uid,
): (type: string, object: unknown) => boolean {
  const seen = new Map<string, string>();
  return (type, object) => {
    const id = key(object as T);
    if (id === undefined) return true;
    if (type === "DELETED") {
      seen.delete(id);
      return true;
    }
    const now = state(object as T);
    if (seen.get(id) === now) return false;
    seen.set(id, now);
    return true;
  };
}

/**
 * Called on each change a watch sees, with the event's type (`ADDED`, `MODIFIED`, `DELETED`) and
 * object; with neither after a restart that may have missed changes, when only a relist tells.
 */
export type OnChange = (type?: string, object?: unknown) => void;

/**
 * Calls `onChange` whenever an object under API `path` (e.g.
 * `/apis/peering.pulumi-liqo.dev/v1alpha1/resourcerequests`) is added, changed or deleted, and
 * after every restart that may have missed a change. Resolves when `signal` aborts.
 */
export async function wakeOnChanges(
  kc: k8s.KubeConfig,
  path: string,
  onChange: OnChange,
  options: WatchOptions,
): Promise<void> {
  const watch = new k8s.Watch(kc);
  const backoff = new Backoff(`watch ${path}`, options.backoff ?? AGENT_BACKOFF);
  let resourceVersion: string | undefined;
  while (!options.signal.aborted) {
    let stop: (() => void) | undefined;
    const ended = await new Promise<Ended>((resolve) => {
      const query = {
        ...(resourceVersion ? { resourceVersion } : {}),
        ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
      };
      watch
        .watch(
          path,
          query,
          (type: string, object: { metadata?: { resourceVersion?: string } } | undefined) => {
            // ERROR is the server saying it cannot resume from that version (410): start over.
            if (type === "ERROR") resourceVersion = undefined;
            else {
              resourceVersion = object?.metadata?.resourceVersion ?? resourceVersion;
              const recovered = backoff.succeeded();
              if (recovered) options.reporter?.info(recovered);
            }
            if (type !== "BOOKMARK" && (options.relevant?.(type, object) ?? true)) onChange(type, object);
          },
          (error: unknown) => resolve({ error }),
        )
        .then(
          (controller) => {
            stop = () => controller.abort();
            options.signal.addEventListener("abort", stop, { once: true });
          },
          (error: unknown) => resolve({ error }),
        );
    });
    if (stop) options.signal.removeEventListener("abort", stop);
    if (options.signal.aborted) return;
    if (!isOrdinaryEnd(ended.error) || resourceVersion === undefined) {
      resourceVersion = undefined;
      // A failure backs off and says why; a quiet end with nothing seen (an empty collection) is no failure.
      let pauseMs = QUIET_RESTART_MS;
      if (!isOrdinaryEnd(ended.error)) {
        const decision = backoff.failed(describeKubeError(ended.error), Date.now());
        if (decision.report) options.reporter?.warn(decision.report);
        pauseMs = decision.delayMs;
      }
      await (options.retryNow
        ? options.retryNow.sleep(pauseMs, options.signal)
        : abortableDelay(pauseMs, options.signal));
      onChange();
    }
  }
}

/**
 * One {@link wakeOnChanges} per namespace for a namespaced kind, for an agent allowed to read that
 * kind only in some namespaces (a RoleBinding each): {@link follow} starts the watches of
 * namespaces new to the set and stops those of namespaces gone from it.
 */
export class WatchesPerNamespace {
  private readonly running = new Map<string, AbortController>();

  /**
   * @param collection the API path of the kind's collection in a namespace, e.g. `configmaps` in
   *   the core API: `(namespace) => \`/api/v1/namespaces/${namespace}/configmaps\``
   * @param onChange called on every change in a followed namespace
   * @param options the watches' options; its signal stops them all
   */
  constructor(
    private readonly kc: k8s.KubeConfig,
    private readonly collection: (namespace: string) => string,
    private readonly onChange: OnChange,
    private readonly options: WatchOptions,
  ) {}

  /** Watches exactly `namespaces` from now on. */
  follow(namespaces: ReadonlySet<string>): void {
    for (const [namespace, controller] of this.running)
      if (!namespaces.has(namespace)) {
        controller.abort();
        this.running.delete(namespace);
      }
    for (const namespace of namespaces) {
      if (this.running.has(namespace) || this.options.signal.aborted) continue;
      const controller = new AbortController();
      const stop = (): void => controller.abort();
      this.options.signal.addEventListener("abort", stop, { once: true });
      this.running.set(namespace, controller);
      const path = this.collection(encodeURIComponent(namespace));
      void wakeOnChanges(this.kc, path, this.onChange, { ...this.options, signal: controller.signal }).finally(() =>
        this.options.signal.removeEventListener("abort", stop),
      );
    }
  }
}
