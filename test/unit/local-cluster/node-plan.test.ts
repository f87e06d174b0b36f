/** planNodes: names, namespaces, addresses, pod /24s, cgroup roots and paths of a cluster's worker nodes. */
import { Cidr } from "../../../core/net/cidr.js";
import { LabPlanError, planLab } from "../../../local-cluster/plan.js";
import {
  MAX_NODES,
  MAX_SOCKET_PATH,
  NODE_LAN_CIDR,
  longestSocketPath,
  nodePaths,
  planNodes,
  type NodeHost,
} from "../../../local-cluster/node-plan.js";

const host = (overrides: Partial<NodeHost> = {}): NodeHost => ({
  lab: "t1",
  name: "a",
  netns: "liqo-t1-a",
  podCidr: Cidr.parse("10.100.0.0/16"),
  dir: "/tmp/labs/t1/a",
  ...overrides,
});

describe("planNodes", () => {
  test("GIVEN 3 nodes WHEN planned THEN node i is <cluster>-n<i> at 192.168.101.<i> with the i-th /24 of the pod CIDR", () => {
    const { nodes, problems } = planNodes(host(), 3);
    expect(problems).toEqual([]);
    expect(nodes.map((n) => [n.name, n.index, n.address, n.podCidr])).toEqual([
      ["a-n1", 1, "192.168.101.1", "10.100.1.0/24"],
      ["a-n2", 2, "192.168.101.2", "10.100.2.0/24"],
      ["a-n3", 3, "192.168.101.3", "10.100.3.0/24"],
    ]);
    for (const node of nodes) expect(Cidr.parse(NODE_LAN_CIDR).contains(node.address)).toBe(true);
  });

  test("GIVEN 2 nodes WHEN planned THEN node 1 shares the cluster's namespace and node 2 has its own, joined by a LAN link", () => {
    const [first, second] = planNodes(host(), 2).nodes;
    expect(first!.netns).toBe("liqo-t1-a");
    expect(first!.lanLink).toBeUndefined();
    expect(second!.netns).toBe("liqo-t1-a-n2");
    expect(second!.lanLink).toBe("n2");
  });

  test("GIVEN 2 nodes WHEN planned THEN each has its own directory, cgroup root, CNI network and containerd socket", () => {
    const nodes = planNodes(host(), 2).nodes;
    expect(nodes.map((n) => n.dir)).toEqual(["/tmp/labs/t1/a/n1", "/tmp/labs/t1/a/n2"]);
    expect(nodes.map((n) => n.cgroupRoot)).toEqual(["/liqo-t1-a-n1", "/liqo-t1-a-n2"]);
    expect(nodes.map((n) => n.cniNetwork)).toEqual(["liqo-t1-a-n1", "liqo-t1-a-n2"]);
    for (const node of nodes) {
      expect(node.containerdSocket.startsWith(`${node.dir}/`)).toBe(true);
      for (const path of Object.values(nodePaths(node.dir))) expect(path.startsWith(`${node.dir}/`)).toBe(true);
    }
  });

  test.each([0, MAX_NODES + 1, 1.5])(
    "GIVEN %p nodes WHEN planned THEN the problem names the count and the range",
    (count) => {
      const { nodes, problems } = planNodes(host(), count);
      expect(nodes).toEqual([]);
      expect(problems).toEqual([`cluster a: ${count} nodes requested; expected 1 to ${MAX_NODES}`]);
    },
  );

  test("GIVEN a pod CIDR with fewer /24s than nodes + 1 WHEN planned THEN the problem names the CIDR", () => {
    expect(planNodes(host({ podCidr: Cidr.parse("10.100.0.0/23") }), 1).problems).toEqual([]);
    const { problems } = planNodes(host({ podCidr: Cidr.parse("10.100.0.0/23") }), 2);
    expect(problems).toEqual([expect.stringMatching(/pod CIDR 10\.100\.0\.0\/23 is too small for 2 node\(s\)/)]);
  });

  test("GIVEN a directory so deep that kubelet's sockets pass 107 bytes WHEN planned THEN the problem names the path", () => {
    const deep = `/tmp/${"x".repeat(80)}/a`;
    const { problems } = planNodes(host({ dir: deep }), 1);
    expect(Buffer.byteLength(longestSocketPath(`${deep}/n1`))).toBeGreaterThan(MAX_SOCKET_PATH);
    expect(problems).toEqual([expect.stringMatching(/socket path .*device-plugins\/kubelet\.sock is \d+ bytes/)]);
  });
});

describe("planLab with nodes", () => {
  const settings = {
    profile: "open" as const,
    natForwards: [],
    gatewayPorts: { from: 51820, to: 51830 },
    usedSubnetIndexes: [],
  };

  test("GIVEN --nodes 2 WHEN a lab is planned THEN every cluster has two nodes on its own pod CIDR", () => {
    const plan = planLab("t1", "/tmp/labs/t1", [{ name: "a" }, { name: "b" }], { ...settings, nodes: 2 });
    expect(plan.clusters.map((c) => c.nodes.map((n) => n.podCidr))).toEqual([
      ["10.100.1.0/24", "10.100.2.0/24"],
      ["10.101.1.0/24", "10.101.2.0/24"],
    ]);
  });

  test("GIVEN no node count WHEN a lab is planned THEN every cluster has one node", () => {
    const plan = planLab("t1", "/tmp/labs/t1", [{ name: "a" }], settings);
    expect(plan.clusters[0]!.nodes.map((n) => n.name)).toEqual(["a-n1"]);
  });

  test("GIVEN a pod CIDR overlapping the node LAN WHEN a lab is planned THEN it is refused, naming both", () => {
    expect(() => planLab("t1", "/tmp/labs/t1", [{ name: "a", podCidr: "192.168.0.0/16" }], settings)).toThrow(
      LabPlanError,
    );
    expect(() => planLab("t1", "/tmp/labs/t1", [{ name: "a", podCidr: "192.168.0.0/16" }], settings)).toThrow(
      /pod CIDR 192\.168\.0\.0\/16 overlaps the node network 192\.168\.101\.0\/24/,
    );
  });
});
