/**
 * The local clusters' load balancer (MetalLB in L2 mode, `up`'s default): a Service of type
 * LoadBalancer in one cluster gets an address of that cluster's own range of the lab subnet, a pod
 * of another cluster reaches the pod behind it there over TCP and UDP (ARP answered by the speaker
 * on node 1's lab interface, then kube-proxy's rules for the Service's ingress address), and the
 * address goes back to the pool when the Service goes.
 */
import * as k8s from "@kubernetes/client-node";
import { Cidr } from "../../core/net/cidr.js";
import { poll } from "../../core/wait/poll.js";
import { withLab } from "../../harness/labs.js";
import { adminConfig } from "../../local-cluster/inspect.js";
import { clusterOf, type ClusterState } from "../../local-cluster/lab.js";
import { METALLB_NAMESPACE, POOL_NAME } from "../../local-cluster/load-balancer.js";
import { LOAD_BALANCER_RANGE_SIZE, loadBalancerRange } from "../../local-cluster/plan.js";
import { POD_NAMESPACE, coreOf, podName, podtoolFrom, runPodtool } from "../../local-cluster/pods.js";

/** A private lab's start (behind any other lab's, one at a time machine-wide), then the waits below. */
const TEST_BOUND_MS = 12 * 60_000;
/** From the Service's creation to its address: MetalLB's controller may still be starting. */
const ADDRESS_TIMEOUT_MS = 180_000;
/** From the address to an answer: the speaker on node 1 may still be starting, and kube-proxy writing rules. */
const ANSWER_TIMEOUT_MS = 120_000;
/** For the pool's counters to follow an assignment or a release. */
const POOL_TIMEOUT_MS = 60_000;

const SERVICE = "echo-lb";
const PORT = 8080;

/** The pool's counters, as MetalLB's controller writes them into its status. */
interface PoolStatus {
  readonly assignedIPv4?: number;
  readonly availableIPv4?: number;
}

function waitForPool(cluster: ClusterState, assigned: number): Promise<PoolStatus> {
  const api = adminConfig(cluster).makeApiClient(k8s.CustomObjectsApi);
  return poll(
    {
      step: `cluster ${cluster.name}`,
      object: `IPAddressPool ${POOL_NAME} with ${assigned} assigned`,
      endpoint: cluster.apiServerUrl,
    },
    { timeoutMs: POOL_TIMEOUT_MS, intervalMs: 500 },
    async () => {
      const pool = (await api.getNamespacedCustomObject({
        group: "metallb.io",
        version: "v1beta1",
        namespace: METALLB_NAMESPACE,
        plural: "ipaddresspools",
        name: POOL_NAME,
      })) as { status?: PoolStatus };
      return pool.status?.assignedIPv4 === assigned
        ? { done: true, value: pool.status }
        : { done: false, state: JSON.stringify(pool.status ?? "no status") };
    },
  );
}

describe("the lab's load balancer", () => {
  test(
    "GIVEN a lab of two clusters with MetalLB WHEN a Service of type LoadBalancer is made in a THEN it gets an address " +
      "of a's range, a pod of b reaches a's pod there over TCP and UDP, and the address is released when the Service goes",
    async () => {
      await withLab([{ name: "a" }, { name: "b" }], { loadBalancer: "metallb" }, async (lab) => {
        const a = clusterOf(lab, "a");
        const b = clusterOf(lab, "b");
        const subnet = Cidr.parse(`172.29.${lab.subnetIndex}.0/24`);
        expect(lab.loadBalancer).toBe("metallb");
        expect(a.loadBalancerAddresses).toBe(loadBalancerRange(subnet, 0));
        expect(b.loadBalancerAddresses).toBe(loadBalancerRange(subnet, 1));

        await runPodtool(a, 1);
        await runPodtool(b, 1);
        const core = coreOf(a);
        await core.createNamespacedService({
          namespace: POD_NAMESPACE,
          body: {
            metadata: { name: SERVICE },
            spec: {
              type: "LoadBalancer",
              selector: { app: "podtool" },
              ports: [
                { name: "tcp", protocol: "TCP", port: PORT, targetPort: PORT },
                { name: "udp", protocol: "UDP", port: PORT, targetPort: PORT },
              ],
            },
          },
        });
        const address = await poll(
          { step: "cluster a", object: `Service ${SERVICE}'s load-balancer address`, endpoint: a.apiServerUrl },
          { timeoutMs: ADDRESS_TIMEOUT_MS, intervalMs: 500 },
          async () => {
            const service = await core.readNamespacedService({ name: SERVICE, namespace: POD_NAMESPACE });
            const ip = service.status?.loadBalancer?.ingress?.[0]?.ip;
            return ip ? { done: true, value: ip } : { done: false, state: "EXTERNAL-IP <pending>" };
          },
        );
        const [first] = a.loadBalancerAddresses!.split("-") as [string];
        const offset = Number(address.split(".")[3]) - Number(first.split(".")[3]);
        expect({
          address,
          inRange: subnet.contains(address) && offset >= 0 && offset < LOAD_BALANCER_RANGE_SIZE,
        }).toEqual({ address, inRange: true });
        expect(await waitForPool(a, 1)).toMatchObject({ availableIPv4: LOAD_BALANCER_RANGE_SIZE - 1 });

        // From b's pod: out of b's node 1 (masqueraded), over the lab bridge, to a's announcing node.
        const tcp = await podtoolFrom(b, 1, "tcp", `${address}:${PORT}`, ANSWER_TIMEOUT_MS);
        expect(tcp).toContain(`"podtool ${podName(a, 1)} `);
        const udp = await podtoolFrom(b, 1, "udp", `${address}:${PORT}`, ANSWER_TIMEOUT_MS);
        expect(udp).toContain(`podtool ${podName(a, 1)} heard a datagram from `);

        await core.deleteNamespacedService({ name: SERVICE, namespace: POD_NAMESPACE });
        expect(await waitForPool(a, 0)).toMatchObject({ availableIPv4: LOAD_BALANCER_RANGE_SIZE });
      });
    },
    TEST_BOUND_MS,
  );
});
