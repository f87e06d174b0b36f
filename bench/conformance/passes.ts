/**
 * The two passes of `npm run conformance`, each on a lab of its own that it removes afterwards,
 * also when it fails:
 *
 * - **baseline**: one plain local cluster (`c`, one worker node), the suite's images in its node;
 *   both passes' clusters allocate node ports from Kubernetes' default range, which the suite
 *   checks each node port against;
 * - **virtual**: consumer `b` peered with provider `a` as a `Peering` and a `Tunnel` do, an
 *   `OffloadingSelector` offloading every namespace the suite makes (it labels each `e2e-framework`)
 *   as a user's would: the default naming (each namespace is `<name>-<b's id>` on `a`, and the
 *   suite's pods find its Services by the names it gives them through the provider's answers,
 *   docs/offloading.md#names) and the default `podOffloading: local-and-remote`, on one shared
 *   service range; both installed with the default exposure (auth service and gateway on the
 *   clusters' load balancers); b's real worker cordoned, so every test pod runs on a through the virtual node;
 *   the suite's images in a's node.
 *
 * The virtual node's taint is taken off for the run: the suite picks the nodes it places pods on
 * among the untainted schedulable ones only (whatever the pods tolerate), and would find none.
 * With b's worker cordoned, nothing but the suite's pods can land on it.
 */
import * as k8s from "@kubernetes/client-node";
import { DEFAULT_POD_OFFLOADING, SYSTEM_NAMESPACE } from "../../core/api/index.js";
import { ensureTunnel } from "../../core/network-fabric/tunnel.js";
import { deleteTunnel } from "../../core/network-fabric/tunnel-delete.js";
import { TUNNEL_DEFAULTS } from "../../core/network-fabric/tunnel-plan.js";
import { offloadSelectedNamespaces, withdrawSelectedNamespaces } from "../../core/offloading/offloading-selector.js";
import { createPeering, deletePeering, type PeeringRecord } from "../../core/peering/peering.js";
import { progressTo } from "../../core/operation/progress.js";
import { clusterOf, DEFAULT_LOAD_BALANCER, type ClusterState } from "../../local-cluster/lab.js";
import { coreOf, setCordoned } from "../../local-cluster/pods.js";
import { withLab } from "../../harness/labs.js";
import { preparePeering, tunnelSidesOf } from "../../harness/peering-pair.js";
import { importSuiteImages } from "./images.js";
import type { BuiltE2eImage } from "../../image/build-e2e.js";
import type { SpecResult } from "./junit.js";

/** The two passes. */
export const PASSES = ["baseline", "virtual"] as const;
/** One of {@link PASSES}. */
export type Pass = (typeof PASSES)[number];

/** What a pass needs besides its lab. */
export interface PassInputs {
  /** The suite's images, built. */
  readonly images: readonly BuiltE2eImage[];
  /** Runs the suite against the cluster of `kubeconfig`, with its report in the pass's directory. */
  readonly runSuite: (pass: Pass, kubeconfig: string) => Promise<SpecResult[]>;
  readonly log: (line: string) => void;
}

/** The OffloadingSelector that offloads the suite's namespaces. */
export const SELECTOR_NAME = "conformance";
/**
 * One service range for both clusters of the virtual pass, as clusters made with one installer's
 * defaults have (kubeadm's is 10.96.0.0/12): the provider then gives its copy of each of the
 * suite's Services the consumer's ClusterIP (service-reflection.ts, `keptClusterIP`), which the
 * suite reads from the consumer's API and dials from pods that run on the provider.
 */
const SHARED_SERVICE_CIDR = "10.96.0.0/16";

/** The label the suite's framework puts on every namespace it makes. */
export const SUITE_NAMESPACE_LABEL = "e2e-framework";

/** Bound of each peering, tunnel and offloading step. */
const STEP_BOUND_MS = 180_000;

/** The baseline pass: the suite against a plain local cluster. */
export function baselinePass(inputs: PassInputs): Promise<SpecResult[]> {
  return withLab([{ name: "c", nodePortRange: "kubernetes" }], {}, async (lab) => {
    const c = clusterOf(lab, "c");
    inputs.log(
      `baseline: lab ${lab.name} up; importing the suite's images into ${c.nodes.map((n) => n.name).join(", ")}`,
    );
    await importSuiteImages([c], inputs.images);
    inputs.log(`baseline: running the suite against cluster c (${c.apiServerUrl})`);
    return inputs.runSuite("baseline", c.kubeconfig);
  });
}

/** Takes the virtual node's taints off, so that the suite counts it among the nodes it may use. */
async function untaintVirtualNode(consumer: ClusterState, name: string): Promise<void> {
  await coreOf(consumer).patchNode(
    { name, body: { spec: { taints: null } } },
    k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
  );
}

/** The virtual pass: the suite against consumer b, whose every test pod runs on provider a. */
export function virtualPass(inputs: PassInputs): Promise<SpecResult[]> {
  const { log } = inputs;
  const progress = progressTo((line) => log(`virtual: ${line}`));
  const clusters = [
    { name: "a", serviceCidr: SHARED_SERVICE_CIDR, nodePortRange: "kubernetes" as const },
    { name: "b", serviceCidr: SHARED_SERVICE_CIDR, nodePortRange: "kubernetes" as const },
  ];
  // MetalLB in both: a test lab has no load balancer unless asked.
  return withLab(clusters, { loadBalancer: DEFAULT_LOAD_BALANCER }, async (lab) => {
    const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
    log(`virtual: lab ${lab.name} up; importing the suite's images into a's ${a.nodes.map((n) => n.name).join(", ")}`);
    await importSuiteImages([a], inputs.images);
    log("virtual: installing a and b, peering b with a");
    // The default exposure: the auth service and the gateway on the clusters' load balancers.
    const pair = await preparePeering(a, b, { sharePercent: 90 }, { exposure: "LoadBalancer" });
    let record: PeeringRecord | undefined;
    let sides: Awaited<ReturnType<typeof tunnelSidesOf>> | undefined;
    let offloaded = false;
    try {
      record = await createPeering({ ...pair.request, timeoutMs: STEP_BOUND_MS }, progress);
      sides = await tunnelSidesOf({ ...pair.consumer, name: "b" }, { ...pair.provider, name: "a" }, record);
      await ensureTunnel(
        sides,
        // No serverAddress: the provider's gateway where its install read it back from its load balancer.
        { server: "provider", ...TUNNEL_DEFAULTS, behindNat: [] },
        STEP_BOUND_MS,
        progress,
      );
      offloaded = true;
      await offloadSelectedNamespaces(
        pair.consumer.kc,
        {
          name: SELECTOR_NAME,
          namespaceSelector: { matchExpressions: [{ key: SUITE_NAMESPACE_LABEL, operator: "Exists" }] },
          virtualNodes: [record.virtualNodeName],
          // The defaults: what a user who writes neither gets.
          naming: "suffixed",
          consumerClusterId: pair.consumer.clusterId,
          podOffloading: DEFAULT_POD_OFFLOADING,
        },
        STEP_BOUND_MS,
        progress,
      );
      await setCordoned(
        coreOf(b),
        b.nodes.map((n) => n.name),
        true,
      );
      await untaintVirtualNode(b, record.virtualNodeName);
      log(
        `virtual: b's ${b.nodes.map((n) => n.name).join(", ")} cordoned, virtual node ${record.virtualNodeName} untainted; ` +
          `OffloadingSelector ${SYSTEM_NAMESPACE}/${SELECTOR_NAME} offloads every namespace labelled ${SUITE_NAMESPACE_LABEL}; ` +
          `running the suite against cluster b (${b.apiServerUrl})`,
      );
      return await inputs.runSuite("virtual", b.kubeconfig);
    } finally {
      // The lab goes next whatever happens here: a step that fails is said, not thrown over the results.
      log("virtual: withdrawing the offloading, the tunnel and the peering");
      await (async () => {
        if (offloaded)
          await withdrawSelectedNamespaces(
            pair.consumer.kc,
            SELECTOR_NAME,
            { force: true, timeoutMs: STEP_BOUND_MS },
            progress,
          );
        if (sides) await deleteTunnel(sides, { force: true, timeoutMs: STEP_BOUND_MS }, progress);
        if (record)
          await deletePeering(
            pair.consumerKubeconfig,
            record,
            pair.auth,
            { force: true, timeoutMs: STEP_BOUND_MS },
            progress,
          );
        await pair.cleanup();
      })().catch((error: unknown) =>
        log(`virtual: clean-up before removing the lab failed (the lab goes anyway): ${(error as Error).message}`),
      );
    }
  });
}
