/**
 * A `Cluster` at `LoadBalancer` exposure whose Services name a load-balancer class nothing in the
 * cluster implements (the shared lab's MetalLB serves only Services without a class), so that their
 * load balancers never answer, as on a cluster with none: through its resource's own create, the
 * install waits for the Service's address and fails within its deadline naming the Service, what
 * is missing and the cluster; it is recorded as created-but-failed with no endpoint it only
 * guessed, and the next `pulumi up` (an update, here with NodePort exposure) finishes it, the
 * gateway's endpoint on the node port the cluster picked; uninstall leaves nothing. The Services
 * carry the annotations, class and source ranges asked, as the API server takes them.
 */
import * as k8s from "@kubernetes/client-node";
import { readFileSync } from "node:fs";
import { SYSTEM_NAMESPACE } from "../../core/api/index.js";
import { AGENT_NAME, GATEWAY_NAME } from "../../core/cluster/agent-components.js";
import { DEFAULT_AGENT_IMAGE } from "../../core/cluster/agent-image.js";
import type { PartialFailure } from "../../core/resources/partial.js";
import { pulumiProvider as cluster, type ClusterInputs, type ClusterOutputs } from "../../core/resources/cluster.js";
import { AUTH_SERVICE_PORT } from "../../local-cluster/control-plane.js";
import { clusterOf } from "../../local-cluster/lab.js";
import { adminConfig, uninstallClusters } from "../../harness/install.js";
import { sharedLab } from "../../harness/labs.js";
import { projectTraces } from "../../harness/leaks.js";

/** The create's own deadline: the wait for the load balancer gets all of it. */
const TIMEOUT_SECONDS = 20;
/** The test's bound: the failed create, then an update that rolls the agent out on node ports. */
const TEST_BOUND_MS = 10 * 60_000;

describe("a Cluster whose load balancer never answers", () => {
  test(
    "GIVEN the shared lab's cluster a and a Cluster whose Services' load-balancer class nothing serves WHEN created " +
      "THEN it fails within its deadline naming the Service and the missing address, recorded without guessed endpoints; " +
      "an update with NodePort exposure finishes it",
    async () => {
      const a = clusterOf(await sharedLab(), "a");
      const kubeconfig = readFileSync(a.kubeconfig, "utf8");
      const inputs: ClusterInputs = {
        name: a.name,
        kubeconfig,
        apiServerUrl: a.apiServerUrl,
        // What a cloud's Services are configured with; this cluster's API server must take them as given.
        agent: {
          image: DEFAULT_AGENT_IMAGE,
          annotations: { "example.com/scheme": "internal" },
          loadBalancerClass: "example.com/internal",
        },
        gateway: { loadBalancerClass: "example.com/udp", loadBalancerSourceRanges: ["172.29.0.0/16"] },
        timeoutSeconds: TIMEOUT_SECONDS,
      };
      try {
        const started = Date.now();
        const failure = (await cluster.create!(inputs).then(
          () => undefined,
          (error: unknown) => error,
        )) as PartialFailure | undefined;
        const took = Date.now() - started;

        expect(failure).toBeDefined();
        expect(failure!.message).toContain(
          `waiting for a load-balancer address for Service ${SYSTEM_NAMESPACE}/${AGENT_NAME} at ${a.apiServerUrl}`,
        );
        expect(failure!.message).toContain("no address in status.loadBalancer.ingress (EXTERNAL-IP <pending>)");
        expect(failure!.message).not.toContain(
          kubeconfig.split("\n").find((line) => line.includes("client-key-data"))!,
        );
        // Within the deadline, give or take one look at the Service and the install's writes before it.
        expect(took).toBeLessThan((TIMEOUT_SECONDS + 60) * 1000);
        expect(failure!.properties).toMatchObject({ clusterId: failure!.id, authUrl: "", gatewayEndpoint: "" });
        const core = adminConfig(a).makeApiClient(k8s.CoreV1Api);
        const service = await core.readNamespacedService({ name: AGENT_NAME, namespace: SYSTEM_NAMESPACE });
        expect(service.spec?.type).toBe("LoadBalancer");
        expect(service.metadata?.annotations).toMatchObject({ "example.com/scheme": "internal" });
        const gatewayService = await core.readNamespacedService({ name: GATEWAY_NAME, namespace: SYSTEM_NAMESPACE });
        expect(gatewayService.spec).toMatchObject({
          loadBalancerClass: "example.com/udp",
          loadBalancerSourceRanges: ["172.29.0.0/16"],
        });

        // The next `pulumi up` runs update from what was recorded: here the Services go on the lab's node ports.
        const onNodePorts: ClusterInputs = {
          ...inputs,
          agent: { image: DEFAULT_AGENT_IMAGE, exposure: "NodePort", nodePort: AUTH_SERVICE_PORT },
          // No node port fixed for the gateway: the one the cluster picks is read back.
          gateway: { exposure: "NodePort" },
          timeoutSeconds: 180,
        };
        const { outs } = await cluster.update!(
          failure!.id,
          failure!.properties as unknown as ClusterOutputs,
          onNodePorts,
        );
        expect(outs).toMatchObject({
          clusterId: failure!.id,
          authUrl: `https://${new URL(a.apiServerUrl).hostname}:${AUTH_SERVICE_PORT}`,
        });
        // The gateway's Service lost its class: the API server changes no class, so it was made anew.
        const remade = await core.readNamespacedService({ name: GATEWAY_NAME, namespace: SYSTEM_NAMESPACE });
        expect(remade.metadata?.uid).not.toBe(gatewayService.metadata?.uid);
        expect(remade.spec).toMatchObject({ type: "NodePort" });
        expect(remade.spec?.loadBalancerClass).toBeUndefined();
        // Its endpoint is the node port the cluster picked, at the API server's host (the lab's nodes have no external address).
        const picked = remade.spec!.ports![0]!.nodePort!;
        expect(outs?.gatewayEndpoint).toBe(`${new URL(a.apiServerUrl).hostname}:${picked}`);
      } finally {
        await uninstallClusters([a]);
      }
      expect(await projectTraces(a.kubeconfig)).toEqual([]);
    },
    TEST_BOUND_MS,
  );
});
