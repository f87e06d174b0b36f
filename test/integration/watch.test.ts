/**
 * The watches that wake the agent's loops, on a real API server: a change wakes at once; a
 * collection that is not there yet is retried, at once when kicked; stopping ends the watch.
 */
import * as k8s from "@kubernetes/client-node";
import { RetryNow, wakeOnChanges, WatchesPerNamespace } from "../../agent/watch.js";
import { clusterOf } from "../../local-cluster/lab.js";
import { poll } from "../../core/wait/poll.js";
import { adminConfig } from "../../harness/install.js";
import { sharedLab } from "../../harness/labs.js";

/** Each test's bound: watch events on the shared lab. */
const TEST_BOUND_MS = 1 * 60_000;

/** Waits until `count()` passes `least`. */
const untilAtLeast = (what: string, count: () => number, least: number): Promise<void> =>
  poll({ step: "test", object: what, endpoint: "the watch" }, { timeoutMs: 10_000, intervalMs: 50 }, async () =>
    count() >= least ? { done: true, value: undefined } : { done: false, state: `${count()} wakes` },
  );

describe("watches that wake the agent's loops", () => {
  test(
    "GIVEN a watch on a namespace's ConfigMaps WHEN one is created and deleted THEN each wakes it, and stopping ends the watch",
    async () => {
      const kc = adminConfig(clusterOf(await sharedLab(), "a"));
      const core = kc.makeApiClient(k8s.CoreV1Api);
      const namespace = `watch-${Date.now().toString(36)}`;
      await core.createNamespace({ body: { metadata: { name: namespace } } });
      const stop = new AbortController();
      let wakes = 0;
      const watching = wakeOnChanges(kc, `/api/v1/namespaces/${namespace}/configmaps`, () => void (wakes += 1), {
        signal: stop.signal,
      });
      try {
        // The namespace's own root CA ConfigMap may arrive first: count from whatever has come.
        await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "first" }, data: { a: "1" } } });
        await untilAtLeast("a wake for the create", () => wakes, 1);
        const afterCreate = wakes;
        await core.deleteNamespacedConfigMap({ name: "first", namespace });
        await untilAtLeast("a wake for the delete", () => wakes, afterCreate + 1);
      } finally {
        stop.abort();
        await watching;
        await core.deleteNamespace({ name: namespace });
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a collection that is not installed WHEN its watch is kicked THEN it retries at once and wakes its loop to relist",
    async () => {
      const kc = adminConfig(clusterOf(await sharedLab(), "a"));
      const stop = new AbortController();
      const retryNow = new RetryNow();
      let wakes = 0;
      const watching = wakeOnChanges(kc, "/apis/no-such-group.example/v1/things", () => void (wakes += 1), {
        signal: stop.signal,
        backoff: { initialMs: 60_000, maxMs: 60_000 },
        retryNow,
      });
      try {
        for (let kick = 1; kick <= 2; kick++) {
          // Each failed start waits up to 60 s unless kicked; a kick ends that wait and the loop is woken.
          await poll(
            { step: "test", object: "a kicked retry", endpoint: "the watch" },
            { timeoutMs: 10_000, intervalMs: 100 },
            async () => {
              retryNow.kick();
              return wakes >= kick ? { done: true, value: undefined } : { done: false, state: `${wakes} wakes` };
            },
          );
        }
      } finally {
        stop.abort();
        await watching;
      }
      expect(wakes).toBeGreaterThanOrEqual(2);
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN watches that follow a set of namespaces WHEN the set changes THEN only the namespaces in it wake",
    async () => {
      const kc = adminConfig(clusterOf(await sharedLab(), "a"));
      const core = kc.makeApiClient(k8s.CoreV1Api);
      const suffix = Date.now().toString(36);
      const [first, second] = [`follow-1-${suffix}`, `follow-2-${suffix}`];
      for (const name of [first, second]) await core.createNamespace({ body: { metadata: { name } } });
      const stop = new AbortController();
      const seen: string[] = [];
      const watches = new WatchesPerNamespace(
        kc,
        (ns) => `/api/v1/namespaces/${ns}/configmaps`,
        () => undefined,
        {
          signal: stop.signal,
          relevant: (_type, object) => {
            const { namespace, name } = (object as k8s.V1ConfigMap).metadata ?? {};
            seen.push(`${namespace}/${name}`);
            return true;
          },
        },
      );
      const create = (namespace: string, name: string): Promise<unknown> =>
        core.createNamespacedConfigMap({ namespace, body: { metadata: { name } } });
      const until = (key: string): Promise<void> =>
        untilAtLeast(`a wake for ${key}`, () => Number(seen.includes(key)), 1);
      try {
        watches.follow(new Set([first]));
        await create(first, "one");
        await until(`${first}/one`);

        watches.follow(new Set([second]));
        await create(first, "two");
        await create(second, "three");
        await until(`${second}/three`);
        await create(first, "four");
        await create(second, "five");
        await until(`${second}/five`);
        // The first namespace's watch stopped when it left the set: its later ConfigMaps woke nothing.
        expect(seen.filter((key) => key.startsWith(`${first}/`) && key !== `${first}/one`)).toEqual(
          seen.includes(`${first}/kube-root-ca.crt`) ? [`${first}/kube-root-ca.crt`] : [],
        );
      } finally {
        stop.abort();
        for (const name of [first, second]) await core.deleteNamespace({ name });
      }
    },
    TEST_BOUND_MS,
  );
});
