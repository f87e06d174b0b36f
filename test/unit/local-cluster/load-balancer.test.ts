/** MetalLB as the local clusters deploy it: the module's own CRDs and RBAC in its namespace, the controller, the speaker, the pool. */
import type * as k8s from "@kubernetes/client-node";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  forgeLabPool,
  forgeMetallbWorkloads,
  LAB_INTERFACE,
  METALLB_NAMESPACE,
  moduleManifests,
} from "../../../local-cluster/load-balancer.js";

const IMAGES = { controller: "pulumi-liqo.local/metallb-controller:1", speaker: "pulumi-liqo.local/metallb-speaker:1" };

describe("MetalLB's workloads", () => {
  const [controller, speaker] = forgeMetallbWorkloads(IMAGES) as [k8s.V1Deployment, k8s.V1DaemonSet];

  test("GIVEN the workloads WHEN forged THEN they run the images given, in metallb-system, as the ServiceAccounts its RBAC binds", () => {
    expect(controller.metadata).toMatchObject({ name: "controller", namespace: METALLB_NAMESPACE });
    expect(speaker.metadata).toMatchObject({ name: "speaker", namespace: METALLB_NAMESPACE });
    expect(controller.spec!.template.spec!.serviceAccountName).toBe("controller");
    expect(speaker.spec!.template.spec!.serviceAccountName).toBe("speaker");
    expect(controller.spec!.template.spec!.containers[0]).toMatchObject({
      image: IMAGES.controller,
      imagePullPolicy: "Never",
    });
    expect(speaker.spec!.template.spec!.containers[0]).toMatchObject({
      image: IMAGES.speaker,
      imagePullPolicy: "Never",
    });
    expect(controller.spec!.selector.matchLabels).toEqual(controller.spec!.template.metadata!.labels);
    expect(speaker.spec!.selector.matchLabels).toEqual(speaker.spec!.template.metadata!.labels);
  });

  test("GIVEN the speaker WHEN forged THEN it runs on the node's network with NET_RAW only, and without memberlist", () => {
    const pod = speaker.spec!.template.spec!;
    expect(pod.hostNetwork).toBe(true);
    expect(pod.containers[0]!.securityContext?.capabilities).toEqual({ add: ["NET_RAW"], drop: ["ALL"] });
    const env = pod.containers[0]!.env!.map((e) => e.name);
    expect(env).toContain("METALLB_NODE_NAME");
    // No bind address or labels: MetalLB starts no memberlist.
    expect(env.filter((name) => name.startsWith("METALLB_ML_"))).toEqual([]);
    expect(pod.containers[0]!.args!.some((arg) => arg.startsWith("--ml-"))).toBe(false);
  });

  test("GIVEN the controller WHEN forged THEN it serves no webhook, runs as a non-root user, and asks for no resources", () => {
    const pod = controller.spec!.template.spec!;
    expect(pod.containers[0]!.args).toContain("--webhook-mode=disabled");
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65534 });
    expect(pod.containers[0]!.resources).toBeUndefined();
    expect(speaker.spec!.template.spec!.containers[0]!.resources).toBeUndefined();
  });
});

describe("a cluster's pool", () => {
  test("GIVEN a cluster's range WHEN forged THEN the pool holds it and only node 1's lab interface announces it", () => {
    const [pool, advertisement] = forgeLabPool({
      name: "a",
      loadBalancerAddresses: "172.29.3.64-172.29.3.67",
      announcingNode: "a-n1",
    }) as [k8s.KubernetesObject & { spec: unknown }, k8s.KubernetesObject & { spec: unknown }];
    expect(pool).toMatchObject({
      apiVersion: "metallb.io/v1beta1",
      kind: "IPAddressPool",
      metadata: { namespace: METALLB_NAMESPACE },
      spec: { addresses: ["172.29.3.64-172.29.3.67"] },
    });
    expect(advertisement).toMatchObject({
      kind: "L2Advertisement",
      metadata: { namespace: METALLB_NAMESPACE },
      spec: {
        ipAddressPools: [pool.metadata!.name],
        interfaces: [LAB_INTERFACE],
        nodeSelectors: [{ matchLabels: { "kubernetes.io/hostname": "a-n1" } }],
      },
    });
  });
});

describe("MetalLB's own manifests", () => {
  let home: string;
  beforeAll(() => {
    // The layout of the module's config/ (crd/ and rbac/, each a kustomization listing its files).
    home = mkdtempSync(join(tmpdir(), "liqo-metallb-test-"));
    mkdirSync(join(home, "config", "crd", "bases"), { recursive: true });
    mkdirSync(join(home, "config", "rbac"), { recursive: true });
    const write = (path: string, text: string): void => writeFileSync(join(home, "config", path), text);
    write("crd/kustomization.yaml", "resources:\n- bases/pools.yaml\npatches:\n- path: patches/ignored.yaml\n");
    write(
      "crd/bases/pools.yaml",
      "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ipaddresspools.metallb.io\n",
    );
    write("rbac/kustomization.yaml", "resources:\n  - role.yaml\n  - service-accounts.yaml\n");
    write(
      "rbac/role.yaml",
      [
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: metallb-system:speaker",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: pod-lister",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: metallb-system:speaker\n" +
          "roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: metallb-system:speaker\n" +
          "subjects:\n  - kind: ServiceAccount\n    name: speaker\n  - kind: Group\n    name: someone",
      ].join("\n---\n"),
    );
    write("rbac/service-accounts.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: speaker\n");
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  test("GIVEN the module's config WHEN read THEN its files come in the kustomizations' order, namespaced ones in metallb-system", () => {
    const objects = moduleManifests(home);
    expect(objects.map((o) => `${o.kind}/${o.metadata?.name}/${o.metadata?.namespace ?? "-"}`)).toEqual([
      "CustomResourceDefinition/ipaddresspools.metallb.io/-",
      "ClusterRole/metallb-system:speaker/-",
      `Role/pod-lister/${METALLB_NAMESPACE}`,
      "ClusterRoleBinding/metallb-system:speaker/-",
      `ServiceAccount/speaker/${METALLB_NAMESPACE}`,
    ]);
    expect((objects[3] as k8s.V1ClusterRoleBinding).subjects).toEqual([
      { kind: "ServiceAccount", name: "speaker", namespace: METALLB_NAMESPACE },
      { kind: "Group", name: "someone" },
    ]);
  });
});
