import type * as k8s from "@kubernetes/client-node";
import {
  AGENT_NAME,
  forgeAgentDeployment,
  type AgentDeploymentSpec,
} from "../../../../core/cluster/agent-deployment.js";
import { GATEWAY_NAME, ROUTE_NAME } from "../../../../core/cluster/agent-components.js";
import { DEFAULT_AGENT_IMAGE } from "../../../../core/cluster/agent-image.js";
import {
  daemonSetRollout,
  deploymentRefusal,
  deploymentRollout,
  describeRefusal,
  latestRefusal,
} from "../../../../core/cluster/agent-rollout.js";
import { agentDeploymentOf, clusterEndpointsOf } from "../../../../core/cluster/install-plan.js";

const spec: AgentDeploymentSpec = {
  image: "registry.example.com/pulumi-liqo/agent:0.1.0",
  auth: { port: 8443, exposure: { type: "NodePort", nodePort: 8443 } },
  gateway: { port: 51820, exposure: { type: "LoadBalancer" } },
};

type Workload = k8s.V1Deployment | k8s.V1DaemonSet;
const objects = (s: AgentDeploymentSpec = spec): k8s.KubernetesObject[] => forgeAgentDeployment(s);
const find = <T extends k8s.KubernetesObject>(kind: string, name: string, s?: AgentDeploymentSpec): T =>
  objects(s).find((o) => o.kind === kind && o.metadata?.name === name) as T;
const podOf = (workload: Workload): k8s.V1PodSpec => workload.spec!.template.spec!;
const containerOf = (workload: Workload): k8s.V1Container => podOf(workload).containers[0]!;

describe("agent manifests", () => {
  test("GIVEN each workload WHEN forged THEN its pods may only run on real nodes, never on a virtual node", () => {
    const workloads = objects().filter((o): o is Workload => o.kind === "Deployment" || o.kind === "DaemonSet");
    expect(workloads.map((w) => w.metadata!.name).sort()).toEqual([AGENT_NAME, GATEWAY_NAME, ROUTE_NAME].sort());
    for (const workload of workloads)
      expect(podOf(workload).affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution).toEqual({
        nodeSelectorTerms: [
          { matchExpressions: [{ key: "peering.pulumi-liqo.dev/virtual-node", operator: "DoesNotExist" }] },
        ],
      });
  });

  test("GIVEN the control Deployment WHEN forged THEN it runs the control role, non-root, read-only, with no capability", () => {
    const control = find<k8s.V1Deployment>("Deployment", AGENT_NAME);
    expect(containerOf(control).args).toEqual(["control", "--auth-listen", "0.0.0.0:8443"]);
    expect(containerOf(control).command).toBeUndefined();
    expect(containerOf(control).image).toBe(spec.image);
    expect(containerOf(control).securityContext).toEqual({
      runAsUser: 65532,
      runAsGroup: 65532,
      runAsNonRoot: true,
      privileged: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    });
    expect(podOf(control).hostNetwork).toBeUndefined();
    expect(podOf(control).serviceAccountName).toBe(AGENT_NAME);
  });

  test("GIVEN the gateway Deployment WHEN forged THEN one hostNetwork pod, Recreate, exactly NET_ADMIN and NET_RAW, the TUN device", () => {
    const gateway = find<k8s.V1Deployment>("Deployment", GATEWAY_NAME);
    expect(gateway.spec!.replicas).toBe(1);
    expect(gateway.spec!.strategy).toEqual({ type: "Recreate" });
    expect(podOf(gateway).hostNetwork).toBe(true);
    expect(containerOf(gateway).args).toEqual(["gateway", "--work-dir", "/var/lib/pulumi-liqo/gateway"]);
    const security = containerOf(gateway).securityContext!;
    expect(security.privileged).toBe(false);
    expect(security.allowPrivilegeEscalation).toBe(false);
    expect(security.runAsUser).toBe(0);
    expect(security.capabilities).toEqual({ drop: ["ALL"], add: ["NET_ADMIN", "NET_RAW"] });
    expect(podOf(gateway).volumes).toContainEqual({
      name: "tun",
      hostPath: { path: "/dev/net/tun", type: "CharDevice" },
    });
    expect(containerOf(gateway).env).toContainEqual({
      name: "NODE_NAME",
      valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } },
    });
    expect(containerOf(gateway).env).toContainEqual({
      name: "NODE_ADDRESS",
      valueFrom: { fieldRef: { fieldPath: "status.hostIP" } },
    });
    // The only hostPaths: the TUN device and the node's iptables lock.
    expect(
      podOf(gateway)
        .volumes!.filter((v) => v.hostPath)
        .map((v) => v.hostPath!.path),
    ).toEqual(["/dev/net/tun", "/run/xtables.lock"]);
  });

  test("GIVEN the route DaemonSet WHEN forged THEN hostNetwork, exactly NET_ADMIN, its node's name, on control-plane nodes too", () => {
    const route = find<k8s.V1DaemonSet>("DaemonSet", ROUTE_NAME);
    expect(podOf(route).hostNetwork).toBe(true);
    expect(containerOf(route).args).toEqual(["route"]);
    expect(containerOf(route).securityContext!.capabilities).toEqual({ drop: ["ALL"], add: ["NET_ADMIN"] });
    expect(containerOf(route).securityContext!.privileged).toBe(false);
    expect(containerOf(route).env).toContainEqual({
      name: "NODE_NAME",
      valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } },
    });
    expect(podOf(route).tolerations!.map((t) => t.key)).toEqual([
      "node-role.kubernetes.io/control-plane",
      "node-role.kubernetes.io/master",
    ]);
    expect(podOf(route).volumes).toBeUndefined();
  });

  test("GIVEN every workload WHEN forged THEN none is privileged and each runs as its own ServiceAccount", () => {
    const workloads = objects().filter((o) => o.kind === "Deployment" || o.kind === "DaemonSet") as Workload[];
    expect(workloads.map((w) => podOf(w).serviceAccountName)).toEqual([AGENT_NAME, GATEWAY_NAME, ROUTE_NAME]);
    for (const w of workloads) {
      expect(containerOf(w).securityContext!.privileged).toBe(false);
      expect(containerOf(w).securityContext!.capabilities!.drop).toEqual(["ALL"]);
      expect(podOf(w).hostPID).toBeUndefined();
    }
  });

  test("GIVEN each exposure WHEN forged THEN the Services (or the host port) follow it", () => {
    const auth = find<k8s.V1Service>("Service", AGENT_NAME);
    expect(auth.spec!.type).toBe("NodePort");
    expect(auth.spec!.ports).toEqual([
      { name: "auth", port: 8443, protocol: "TCP", targetPort: "auth", nodePort: 8443 },
    ]);
    const gateway = find<k8s.V1Service>("Service", GATEWAY_NAME);
    expect(gateway.spec!.type).toBe("LoadBalancer");
    expect(gateway.spec!.ports).toEqual([{ name: "wireguard", port: 51820, protocol: "UDP", targetPort: 51820 }]);

    const nodePort = { ...spec, gateway: { port: 51821, exposure: { type: "NodePort", nodePort: 51830 } } } as const;
    expect(find<k8s.V1Service>("Service", GATEWAY_NAME, nodePort).spec!.ports![0]!.nodePort).toBe(51830);

    const hostPort = { ...spec, gateway: { port: 51820, exposure: { type: "hostPort" } } } as const;
    expect(find("Service", GATEWAY_NAME, hostPort)).toBeUndefined();
    expect(containerOf(find<k8s.V1Deployment>("Deployment", GATEWAY_NAME, hostPort)).ports).toEqual([
      { name: "wireguard", containerPort: 51820, protocol: "UDP", hostPort: 51820 },
    ]);
  });

  test("GIVEN Cluster inputs WHEN the deployment is planned THEN LoadBalancer and default ports unless told; a fixed node port is what peers reach", () => {
    expect(agentDeploymentOf({}, DEFAULT_AGENT_IMAGE)).toEqual({
      image: DEFAULT_AGENT_IMAGE,
      auth: { port: 8443, exposure: { type: "LoadBalancer" } },
      gateway: { port: 51820, exposure: { type: "LoadBalancer" } },
    });
    expect(DEFAULT_AGENT_IMAGE).toMatch(/^pulumi-liqo\.local\/agent:\d+\.\d+\.\d+/);
    const asked = {
      agent: { image: "x", exposure: "NodePort", nodePort: 30443 },
      gateway: { exposure: "NodePort", nodePort: 31820 },
    } as const;
    expect(agentDeploymentOf(asked, "x").gateway).toEqual({
      port: 51820,
      exposure: { type: "NodePort", nodePort: 31820 },
    });
    const endpoints = clusterEndpointsOf(asked, "https://10.0.0.1:6443");
    expect(endpoints.authUrl).toBe("https://10.0.0.1:30443");
    expect(endpoints.gatewayEndpoint).toBe("10.0.0.1:31820");
    expect(agentDeploymentOf({ gateway: { exposure: "hostPort", port: 51825 } }, "x").gateway).toEqual({
      port: 51825,
      exposure: { type: "hostPort" },
    });
  });
});

describe("agent rollout", () => {
  const deployment = (status: k8s.V1DeploymentStatus, generation = 2): k8s.V1Deployment => ({
    metadata: { generation },
    spec: { replicas: 1, selector: {}, template: {} },
    status,
  });

  test("GIVEN a Deployment WHEN judged THEN done only with the current generation observed, updated, available, no old pod", () => {
    expect(
      deploymentRollout(deployment({ observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1 })),
    ).toEqual({
      done: false,
      state: "generation 2 not observed yet (at 1)",
    });
    expect(
      deploymentRollout(deployment({ observedGeneration: 2, replicas: 2, updatedReplicas: 1, availableReplicas: 1 })),
    ).toEqual({
      done: false,
      state: "1/1 replicas updated, 1/1 available, 1 old left",
    });
    expect(
      deploymentRollout(deployment({ observedGeneration: 2, replicas: 1, updatedReplicas: 1, availableReplicas: 0 })),
    ).toEqual({
      done: false,
      state: "1/1 replicas updated, 0/1 available, 0 old left",
    });
    expect(
      deploymentRollout(deployment({ observedGeneration: 2, replicas: 1, updatedReplicas: 1, availableReplicas: 1 })),
    ).toEqual({
      done: true,
    });
  });

  test("GIVEN a DaemonSet WHEN judged THEN done only when every node runs the current, available pod", () => {
    const daemonSet = (status?: k8s.V1DaemonSetStatus): k8s.V1DaemonSet => ({
      metadata: { generation: 3 },
      ...(status ? { status } : {}),
    });
    expect(daemonSetRollout(daemonSet())).toEqual({ done: false, state: "generation 3 not observed yet (at 0)" });
    const base = {
      currentNumberScheduled: 2,
      numberMisscheduled: 0,
      numberReady: 2,
      desiredNumberScheduled: 2,
      observedGeneration: 3,
    };
    expect(daemonSetRollout(daemonSet({ ...base, updatedNumberScheduled: 1, numberAvailable: 2 }))).toEqual({
      done: false,
      state: "1/2 nodes updated, 2/2 available",
    });
    expect(daemonSetRollout(daemonSet({ ...base, updatedNumberScheduled: 2, numberAvailable: 2 }))).toEqual({
      done: true,
    });
  });
});

describe("agent pods refused at admission", () => {
  const REFUSED =
    'pods "pulumi-liqo-gateway-7d9f" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)';

  test("GIVEN a Deployment whose ReplicaSet failed to create pods WHEN judged THEN its refusal is the condition's message", () => {
    const refused: k8s.V1Deployment = {
      status: {
        conditions: [
          { type: "Available", status: "False" },
          { type: "ReplicaFailure", status: "True", reason: "FailedCreate", message: REFUSED },
        ],
      },
    };
    expect(deploymentRefusal(refused)).toBe(REFUSED);
    expect(
      deploymentRefusal({ status: { conditions: [{ type: "ReplicaFailure", status: "False" }] } }),
    ).toBeUndefined();
    expect(deploymentRefusal({})).toBeUndefined();
  });

  test("GIVEN a DaemonSet's FailedCreate events WHEN judged THEN the latest recent one is the refusal, an old one none", () => {
    const now = Date.parse("2026-11-28T12:00:00Z");
    const event = (message: string, at: string, reason = "FailedCreate"): k8s.CoreV1Event => ({
      metadata: {},
      involvedObject: {},
      reason,
      message,
      lastTimestamp: new Date(at),
    });
    expect(
      latestRefusal(
        [
          event("older", "2026-11-28T11:59:30Z"),
          event("newest", "2026-11-28T11:59:50Z"),
          event("not a refusal", "2026-11-28T11:59:55Z", "SuccessfulCreate"),
        ],
        now,
      ),
    ).toBe("newest");
    expect(latestRefusal([event("from before", "2026-11-28T11:58:00Z")], now)).toBeUndefined();
  });

  test("GIVEN a refusal WHEN described THEN the API server's words come first, then what the project asks and why", () => {
    expect(describeRefusal(REFUSED)).toBe(
      `the cluster refuses its pods: ${REFUSED} (the project's namespace pulumi-liqo-system asks Pod Security level ` +
        "privileged, since the gateway and the route agent use the node's network and NET_ADMIN; a policy of the " +
        "cluster does not allow what they need)",
    );
  });
});
