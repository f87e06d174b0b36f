/**
 * A consumer whose rights on its provider were cut (as a tenant made by an earlier release lacks
 * the kinds added since), through the real `pulumi` CLI on the shared local clusters (provider
 * `a`, consumer `b`, examples/local-peering offloading a namespace of b): no wait can change a
 * 403, so `pulumi refresh` names it, and an update of the offloading and `pulumi destroy` fail
 * within seconds, not at their deadline, naming the identity, the kind and the ways out, and
 * change nothing. What a provider's `Cluster` install runs gives the rights back, to the consumer's
 * tenant only (a namespace dressed as another consumer's tenant gets none, and does not hold the
 * provider's uninstall up as a peering would), and destroy then leaves nothing.
 */
import * as k8s from "@kubernetes/client-node";
import { join } from "node:path";
import { clusterOf, type LabState } from "../../local-cluster/lab.js";
import {
  API_GROUP,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  REMOTE_CLUSTER_LABEL,
  tenantNamespace,
} from "../../core/api/names.js";
import { NAMESPACE_OFFLOADING_NAME, API_VERSION } from "../../core/api/index.js";
import { reconcileTenants, TENANT_ROLE } from "../../core/authentication/tenant.js";
import { poll } from "../../core/wait/poll.js";
import { readPodOffloading } from "../../core/offloading/pod-placement.js";
import { adminConfig } from "../../harness/install.js";
import { sharedLab, SHARED_LAB_BOUND_MS } from "../../harness/labs.js";
import { deleteNamespaceAndWait } from "../../harness/offloading.js";
import { projectTraces } from "../../harness/leaks.js";
import { configureForLab, outputsOf, PulumiWorkspace } from "../../harness/pulumi.js";

/** The test's bound: up, the cut, refresh, two failed runs, the rights given back and destroy. */
const TEST_BOUND_MS = 10 * 60_000;
/** The bound of this file's set-up and clean-up: the shared lab. */
const HOOK_BOUND_MS = SHARED_LAB_BOUND_MS;
/**
 * Far below the offloading's deadline (300 s): a refusal is found by one look, not waited on. The
 * engine's own start and the program's take most of it on a loaded machine.
 */
const FAILS_WITHIN_MS = 90_000;

/** A written object's metadata and spec, as compared before and after a refused update. */
type WrittenObject = k8s.KubernetesObject & { readonly spec?: unknown };

/** The offloading's own failing step (the engine's event timestamps, whole seconds): under 10 s. */
const STEP_FAILS_WITHIN_S = 10;

/** How long b's agent may take to try a again: its backoff's longest pause (30 s), a pass, and a refresh. */
const AGENT_RETRY_MS = 120_000;

const PROGRAM = join(__dirname, "..", "..", "examples", "local-peering");
const OFFLOADED = "rights-shop";
/** A namespace named as a tenant of one consumer and labelled for another: no tenant. */
const DRESSED_UP = tenantNamespace("0000000000000000");

describe("a consumer whose rights on its provider were cut", () => {
  let lab: LabState;
  beforeAll(async () => {
    lab = await sharedLab();
  }, HOOK_BOUND_MS);

  test(
    "GIVEN b offloading a namespace to a WHEN a's tenant Role for b loses reflectedservices THEN refresh names it, an " +
      "update of the offloading and destroy fail within seconds naming the identity, the kind and the ways out, " +
      "changing nothing; a's install gives the rights back to b's tenant only, and destroy leaves nothing",
    async () => {
      const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
      const [aCore, bCore] = [adminConfig(a), adminConfig(b)].map((kc) => kc.makeApiClient(k8s.CoreV1Api));
      const rbac = adminConfig(a).makeApiClient(k8s.RbacAuthorizationV1Api);
      const offloadings = adminConfig(b).makeApiClient(k8s.CustomObjectsApi);
      const offloadingRef = {
        group: API_GROUP,
        version: API_VERSION,
        namespace: OFFLOADED,
        plural: "namespaceoffloadings",
        name: NAMESPACE_OFFLOADING_NAME,
      };
      const workspace = await PulumiWorkspace.create(PROGRAM);
      let failure: unknown;
      const cleanUp = async (): Promise<void> => {
        await reconcileTenants(adminConfig(a), "test");
        await workspace.pulumi(["destroy", "--yes", "--skip-preview"]);
        workspace.dispose();
        await deleteNamespaceAndWait(adminConfig(b), OFFLOADED);
        await deleteNamespaceAndWait(adminConfig(a), DRESSED_UP);
      };
      await bCore.createNamespace({ body: { metadata: { name: OFFLOADED } } });
      try {
        await configureForLab(workspace, lab);
        await workspace.ok(["config", "set", "offloadNamespace", OFFLOADED]);
        await workspace.ok(["config", "set", "podOffloading", "remote"]);
        await workspace.ok(["up", "--yes", "--skip-preview"]);
        const bId = String((await outputsOf(workspace, "Cluster", "b"))["clusterId"]);
        const tenant = tenantNamespace(bId);

        // The cut, as an administrator's edit would make it (or an earlier release's Role looks).
        const role = await rbac.readNamespacedRole({ name: TENANT_ROLE, namespace: tenant });
        const cut = (role.rules ?? [])
          .map((rule) => ({ ...rule, resources: (rule.resources ?? []).filter((r) => r !== "reflectedservices") }))
          .filter((rule) => rule.resources.length > 0);
        await rbac.replaceNamespacedRole({ name: TENANT_ROLE, namespace: tenant, body: { ...role, rules: cut } });
        await aCore.createNamespace({
          body: {
            metadata: {
              name: DRESSED_UP,
              labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [REMOTE_CLUSTER_LABEL]: "1111111111111111" },
            },
          },
        });
        const refusal = [
          `provider a refuses the consumer`,
          `its identity pulumi-liqo:consumer:${bId} may not`,
          `reflectedservices.${API_GROUP} in ${tenant}`,
        ];

        // refresh reports it on the offloading's status.
        await workspace.pulumi(["refresh", "--yes"]);
        const status = String((await outputsOf(workspace, "NamespaceOffloading", "b-offloads"))["status"]);
        for (const part of refusal) expect(status).toContain(part);

        // An update fails at its first look, and nothing is written.
        const before = (await offloadings.getNamespacedCustomObject(offloadingRef)) as k8s.KubernetesObject;
        await workspace.ok(["config", "set", "podOffloading", "local-and-remote"]);
        let started = Date.now();
        const update = await workspace.timedStep(["up", "--yes", "--skip-preview"], "b-offloads");
        expect(Date.now() - started).toBeLessThan(FAILS_WITHIN_MS);
        expect(update.exitCode).not.toBe(0);
        // The offloading's own step, without the engine's start: seconds, as the issue asks (under 10 s).
        expect(update.stepSeconds).toBeLessThan(STEP_FAILS_WITHIN_S);
        for (const part of [...refusal, "Nothing was changed", "pulumi up of the stack that holds it"])
          expect(update.stdout).toContain(part);
        // Its spec and the pods' placement are as they were (b's agent keeps writing its status, so
        // the object's resourceVersion moves on its own; its generation moves only with the spec).
        const after = (await offloadings.getNamespacedCustomObject(offloadingRef)) as WrittenObject;
        expect(after.metadata?.generation).toBe((before as WrittenObject).metadata?.generation);
        expect(after.spec).toEqual((before as WrittenObject).spec);
        expect(await readPodOffloading(adminConfig(b), { namespace: OFFLOADED }, "test")).toBe("remote");

        // So does destroy, naming force; the offloading stays.
        started = Date.now();
        const destroy = await workspace.timedStep(["destroy", "--yes", "--skip-preview"], "b-offloads");
        expect(Date.now() - started).toBeLessThan(FAILS_WITHIN_MS);
        expect(destroy.exitCode).not.toBe(0);
        expect(destroy.stepSeconds).toBeLessThan(STEP_FAILS_WITHIN_S);
        for (const part of [...refusal, "set force: true on the NamespaceOffloading"])
          expect(destroy.stdout).toContain(part);
        expect(await offloadings.getNamespacedCustomObject(offloadingRef)).toBeDefined();

        // What every Cluster install runs: b's tenant gets its rights back, the dressed-up namespace none.
        expect(await reconcileTenants(adminConfig(a), "test")).toEqual([bId]);
        const restored = await rbac.readNamespacedRole({ name: TENANT_ROLE, namespace: tenant });
        expect(restored.rules?.flatMap((rule) => rule.resources ?? [])).toContain("reflectedservices");
        expect((await rbac.listNamespacedRole({ namespace: DRESSED_UP })).items).toEqual([]);
        // b's agent finds it at its next try of a, after its backoff (at most 30 s); refresh then says Ready.
        await poll(
          { step: "test", object: "b-offloads Ready at refresh", endpoint: b.apiServerUrl },
          { timeoutMs: AGENT_RETRY_MS, intervalMs: 5_000 },
          async () => {
            await workspace.pulumi(["refresh", "--yes"]);
            const now = String((await outputsOf(workspace, "NamespaceOffloading", "b-offloads"))["status"]);
            return now === "Ready" ? { done: true, value: undefined } : { done: false, state: now };
          },
        );
        // Nor does it hold a's uninstall up: it is no tenant.
        await workspace.ok(["destroy", "--yes", "--skip-preview"]);
      } catch (error) {
        failure = error;
        throw error;
      } finally {
        // A failure before the rights came back would leave them cut, and the stack could not be
        // destroyed: give them back first. A clean-up that fails after the test did does not hide why.
        await cleanUp().catch((cleanupError: unknown) => {
          if (failure === undefined) throw cleanupError;
        });
      }
      expect(await projectTraces(a.kubeconfig)).toEqual([]);
      expect(await projectTraces(b.kubeconfig)).toEqual([]);
    },
    TEST_BOUND_MS,
  );
});
