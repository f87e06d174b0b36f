/**
 * Worker nodes in local clusters: one private lab of two clusters with two nodes each, shared by
 * every test here. Nodes register and go Ready; podtool pods run on each node with an address from
 * the node's /24; `kubectl logs` and `exec` work; pods reach each other across nodes (routed over
 * the cluster's node LAN), through a ClusterIP Service (also by name, through cluster DNS) and to
 * the API server through the `kubernetes` Service; and `down`, after the lab's processes were killed, leaves nothing.
 */
import * as k8s from "@kubernetes/client-node";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isRunning, recordOf, type ProcessRecord } from "../../host/processes.js";
import { holdLab, type HeldLab } from "../../harness/labs.js";
import { clusterOf, downLab, readLab, type LabState } from "../../local-cluster/lab.js";
import { Cidr } from "../../core/net/cidr.js";
import { poll } from "../../core/wait/poll.js";
import { labTraces } from "../../harness/leaks.js";
import {
  coreOf as core,
  kubectl,
  podName,
  podtoolFrom,
  POD_NAMESPACE as NAMESPACE,
  runPodtool,
} from "../../local-cluster/pods.js";

/** Each test's bound: pods started on the lab's nodes, their traffic, and a node's restart by its supervisor. */
const TEST_BOUND_MS = 3 * 60_000;

const CLUSTERS = ["a", "b"] as const;
/** Processes whose command line names `text` (the shims of a node name its containerd socket). */
function processesNaming(text: string): ProcessRecord[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(text) ? [recordOf(Number(pid), text, "")!] : [];
      } catch {
        return [];
      }
    })
    .filter(Boolean);
}

/** Processes in the cgroups below `cgroupRoot` (pod containers), in every hierarchy. */
function cgroupProcesses(cgroupRoot: string): ProcessRecord[] {
  const found: ProcessRecord[] = [];
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const pid of readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean)) {
      const record = recordOf(Number(pid), `in ${dir}`, "");
      if (record) found.push(record);
    }
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) walk(join(dir, entry.name));
  };
  walk(join("/sys/fs/cgroup/memory", cgroupRoot));
  return found;
}

/** What of the nodes of `lab` exists on the host: mounts under its directory, cgroups, its CNI cache files. */
function nodeTraces(lab: LabState): string[] {
  const found: string[] = [];
  for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const point = line.split(" ")[4];
    if (point?.startsWith(`${lab.dir}/`)) found.push(`mount ${point}`);
  }
  for (const hierarchy of readdirSync("/sys/fs/cgroup")) {
    for (const node of lab.clusters.flatMap((c) => c.nodes)) {
      if (existsSync(join("/sys/fs/cgroup", hierarchy, node.cgroupRoot)))
        found.push(`cgroup ${hierarchy}${node.cgroupRoot}`);
    }
  }
  // libcni's cache is machine-wide (other labs' nodes may run beside this one): this lab's nodes' entries only.
  const results = "/var/lib/cni/results";
  for (const node of lab.clusters.flatMap((c) => c.nodes))
    for (const file of existsSync(results) ? readdirSync(results) : [])
      if (file.startsWith(`${node.cniNetwork}-`)) found.push(`file ${results}/${file}`);
  return found;
}

describe("worker nodes (private lab: clusters a and b, two nodes each)", () => {
  let lab: LabState | undefined;
  let held: HeldLab | undefined;
  const pods = new Map<string, k8s.V1Pod>();

  beforeAll(async () => {
    held = await holdLab(
      CLUSTERS.map((name) => ({ name })),
      { nodes: 2 },
    );
    lab = held.lab;
  }, 600_000);

  afterAll(() => held?.release(), 600_000);

  test(
    "GIVEN --nodes 2 WHEN the lab is up THEN every node is Ready, at its node LAN address, with its /24 as podCIDR",
    async () => {
      for (const name of CLUSTERS) {
        const cluster = clusterOf(lab!, name);
        const nodes = (await core(cluster).listNode()).items;
        const seen = nodes.map((n) => ({
          name: n.metadata?.name,
          ready: n.status?.conditions?.find((c) => c.type === "Ready")?.status,
          internalIp: n.status?.addresses?.find((a) => a.type === "InternalIP")?.address,
          podCidr: n.spec?.podCIDR,
        }));
        expect(seen).toEqual([
          { name: `${name}-n1`, ready: "True", internalIp: "192.168.101.1", podCidr: cluster.nodes[0]!.podCidr },
          { name: `${name}-n2`, ready: "True", internalIp: "192.168.101.2", podCidr: cluster.nodes[1]!.podCidr },
        ]);
        expect(Cidr.parse(cluster.podCidr).contains(cluster.nodes[1]!.podCidr.split("/")[0]!)).toBe(true);
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a podtool pod bound to each node WHEN it starts THEN it runs with an address from its node's /24",
    async () => {
      for (const name of CLUSTERS) {
        const cluster = clusterOf(lab!, name);
        for (const node of cluster.nodes) {
          const pod = await runPodtool(cluster, node.index);
          pods.set(podName(cluster, node.index), pod);
          expect([pod.spec?.nodeName, Cidr.parse(node.podCidr).contains(pod.status!.podIP!)]).toEqual([
            node.name,
            true,
          ]);
        }
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN the pod on node 2 WHEN it connects to the pod on node 1 THEN it is answered, and `kubectl logs` shows the connection",
    async () => {
      for (const name of CLUSTERS) {
        const cluster = clusterOf(lab!, name);
        const target = pods.get(podName(cluster, 1))!.status!.podIP!;
        const source = pods.get(podName(cluster, 2))!.status!.podIP!;
        const out = await podtoolFrom(cluster, 2, "tcp", `${target}:8080`);
        // The answer names the pod that gave it; the source address proves routing kept the pod's own.
        expect(out).toContain(`podtool ${podName(cluster, 1)} ${target}:8080`);
        expect(out).toContain(`from ${source}:`);
        const logs = await kubectl(cluster, ["logs", podName(cluster, 1)]);
        expect(logs).toMatch(new RegExp(`connection from ${source.replace(/\./g, "\\.")}:\\d+`));
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a ClusterIP Service of the pod on node 1 WHEN the pod on node 2 connects to it THEN the node-1 pod answers",
    async () => {
      const cluster = clusterOf(lab!, "a");
      const service = await core(cluster).createNamespacedService({
        namespace: NAMESPACE,
        body: {
          metadata: { name: "podtool-n1" },
          spec: { selector: { app: "podtool", node: "n1" }, ports: [{ port: 80, targetPort: 8080 }] },
        },
      });
      const out = await podtoolFrom(cluster, 2, "tcp", `${service.spec!.clusterIP!}:80`);
      expect(out).toContain(`podtool ${podName(cluster, 1)} `);
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN cluster DNS (CoreDNS behind kube-dns) WHEN the pod on node 2 dials a Service by its short name, with its " +
      "namespace and by its FQDN THEN each resolves to the Service and the node-1 pod answers; a name outside the cluster does not resolve",
    async () => {
      const cluster = clusterOf(lab!, "b");
      await core(cluster).createNamespacedService({
        namespace: NAMESPACE,
        body: {
          metadata: { name: "named" },
          spec: { selector: { app: "podtool", node: "n1" }, ports: [{ port: 80, targetPort: 8080 }] },
        },
      });
      const dns = await core(cluster).readNamespacedService({ name: "kube-dns", namespace: "kube-system" });
      expect(dns.spec?.clusterIP).toBe(Cidr.parse(cluster.serviceCidr).nth(10));
      // CoreDNS comes up beside the lab's first pods, as in a new kubeadm cluster: the first name may take a moment.
      for (const name of ["named", `named.${NAMESPACE}`, `named.${NAMESPACE}.svc.cluster.local`])
        expect(await podtoolFrom(cluster, 2, "tcp", `${name}:80`, 90_000)).toContain(`podtool ${podName(cluster, 1)} `);
      await expect(podtoolFrom(cluster, 2, "tcp", "example.com:80", 5_000)).rejects.toThrow();
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN pods on both nodes WHEN they call the API server through the `kubernetes` Service THEN it knows them as their ServiceAccount",
    async () => {
      const cluster = clusterOf(lab!, "b");
      const kubernetes = await core(cluster).readNamespacedService({ name: "kubernetes", namespace: NAMESPACE });
      const review = JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" });
      for (const index of [1, 2]) {
        const target = `${kubernetes.spec!.clusterIP!}:443`;
        const out = await kubectl(cluster, [
          "exec",
          podName(cluster, index),
          "--",
          "/podtool",
          "api",
          "/apis/authentication.k8s.io/v1/selfsubjectreviews",
          review,
        ]);
        // podtool dials KUBERNETES_SERVICE_HOST, the Service's ClusterIP, with the pod's token.
        expect(out).toContain(`POST https://${target}/apis/authentication.k8s.io/v1/selfsubjectreviews: HTTP 201`);
        expect(out).toContain('"username":"system:serviceaccount:default:default"');
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN node 2's containerd and kubelet killed WHEN the supervisor sees it THEN both run again, and its pod answers `kubectl exec`",
    async () => {
      const cluster = clusterOf(lab!, "a");
      const killed = ["containerd-n2", "kubelet-n2"].map((name) => cluster.processes.find((p) => p.name === name)!);
      for (const record of killed) process.kill(record.pid, "SIGKILL");
      const killedAt = Date.now();
      await poll(
        { step: "test", object: "supervisor restarting containerd-n2 and kubelet-n2", endpoint: lab!.dir },
        { timeoutMs: 30_000, intervalMs: 250 },
        async () => {
          const now = clusterOf(readLab(lab!.name, join(lab!.dir, ".."))!, "a");
          const waiting = killed.filter((old) => {
            const record = now.processes.find((p) => p.name === old.name)!;
            return record.pid === old.pid || !isRunning(record);
          });
          return waiting.length === 0
            ? { done: true, value: undefined }
            : { done: false, state: `waiting for ${waiting.map((r) => r.name).join(", ")}` };
        },
      );
      expect(Date.now() - killedAt).toBeLessThan(30_000);
      // exec goes API server → kubelet → containerd → the pod's shim (which outlived containerd).
      const target = pods.get(podName(cluster, 1))!.status!.podIP!;
      expect(await podtoolFrom(cluster, 2, "tcp", `${target}:8080`)).toContain(`podtool ${podName(cluster, 1)} `);
      lab = readLab(lab!.name, join(lab!.dir, ".."))!;
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN the lab's processes killed (a crash) WHEN down runs THEN no process, pod, shim, mount, cgroup, netns, link, socket or file is left",
    async () => {
      const records: ProcessRecord[] = [];
      for (const cluster of lab!.clusters) {
        records.push(...cluster.processes, ...(cluster.supervisor ? [cluster.supervisor] : []));
        for (const node of cluster.nodes) {
          records.push(...processesNaming(node.containerdSocket), ...cgroupProcesses(node.cgroupRoot));
        }
      }
      // Four pods (each a pause and a podtool container, and one shim), besides the lab's own processes.
      expect(records.filter((r) => r.name.startsWith("in ")).length).toBeGreaterThanOrEqual(8);
      expect(records.filter((r) => r.name.endsWith("containerd.sock")).length).toBeGreaterThanOrEqual(4);
      for (const record of records.filter((r) => !r.name.startsWith("in ") && !r.name.endsWith(".sock")))
        if (isRunning(record)) process.kill(record.pid, "SIGKILL");

      await downLab(lab!.name, join(lab!.dir, ".."));
      expect(await labTraces(lab!.name, join(lab!.dir, ".."), records)).toEqual([]);
      expect(nodeTraces(lab!)).toEqual([]);
    },
    TEST_BOUND_MS,
  );
});
