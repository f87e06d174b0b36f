/** The local clusters' storage as forged: the default class, its provisioner, and where each node keeps its volumes. */
import type * as k8s from "@kubernetes/client-node";
import {
  forgeLocalPathStorage,
  forgeNodePathMap,
  PROVISIONER,
  STORAGE_CLASS,
} from "../../../local-cluster/local-path-storage.js";

describe("local-path storage", () => {
  const image = "pulumi-liqo.local/local-path-provisioner:1";
  const nodes = [
    { name: "a-n1", dir: "/tmp/labs/t1/a/n1" },
    { name: "a-n2", dir: "/tmp/labs/t1/a/n2" },
  ];
  const objects = forgeLocalPathStorage(image, nodes);
  const ofKind = <T>(kind: string): T => objects.find((o) => o.kind === kind) as T;

  test("GIVEN the objects WHEN forged THEN local-path is the default class, binds on first use and deletes its volumes", () => {
    const storageClass = ofKind<k8s.V1StorageClass>("StorageClass");
    expect(storageClass.metadata?.name).toBe(STORAGE_CLASS);
    expect(storageClass.metadata?.annotations).toEqual({ "storageclass.kubernetes.io/is-default-class": "true" });
    expect(storageClass).toMatchObject({
      provisioner: PROVISIONER,
      volumeBindingMode: "WaitForFirstConsumer",
      reclaimPolicy: "Delete",
    });
  });

  test("GIVEN two nodes WHEN the node path map is forged THEN each has a directory of its own under its node's and there is no default", () => {
    expect(forgeNodePathMap(nodes)).toEqual({
      nodePathMap: [
        { node: "a-n1", paths: ["/tmp/labs/t1/a/n1/local-path"] },
        { node: "a-n2", paths: ["/tmp/labs/t1/a/n2/local-path"] },
      ],
    });
    const config = ofKind<k8s.V1ConfigMap>("ConfigMap");
    expect(JSON.parse(config.data!["config.json"]!)).toEqual(forgeNodePathMap(nodes));
  });

  test("GIVEN its ConfigMap WHEN forged THEN the helper pods run the provisioner's own image, never pulled, with scripts for sh", () => {
    const config = ofKind<k8s.V1ConfigMap>("ConfigMap").data!;
    const helper = JSON.parse(config["helperPod.yaml"]!) as k8s.V1Pod;
    expect(helper.spec?.containers).toEqual([{ name: "helper-pod", image, imagePullPolicy: "Never" }]);
    expect(config["setup"]).toMatch(/^#!\/bin\/sh\n[\s\S]*mkdir -m 0777 -p "\$VOL_DIR"/);
    expect(config["teardown"]).toMatch(/^#!\/bin\/sh\n[\s\S]*rm -rf "\$VOL_DIR"/);
  });

  test("GIVEN its Deployment WHEN forged THEN it runs in kube-system as its service account, reads its ConfigMap, asks for nothing", () => {
    const deployment = ofKind<k8s.V1Deployment>("Deployment");
    const pod = deployment.spec!.template.spec!;
    const container = pod.containers[0]!;
    expect(deployment.metadata?.namespace).toBe("kube-system");
    expect(container).toMatchObject({ image, imagePullPolicy: "Never" });
    expect(container.command).toEqual(
      expect.arrayContaining(["start", "--config=/etc/config/config.json", `--provisioner-name=${PROVISIONER}`]),
    );
    expect(container.resources).toBeUndefined();
    expect(pod.volumes).toEqual([{ name: "config-volume", configMap: { name: "local-path-config" } }]);
    const account = ofKind<k8s.V1ServiceAccount>("ServiceAccount").metadata!;
    expect(pod.serviceAccountName).toBe(account.name);
    expect(container.command).toContain(`--service-account-name=${account.name}`);
    for (const binding of objects.filter((o) => o.kind?.endsWith("Binding")) as k8s.V1RoleBinding[])
      expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: account.name, namespace: "kube-system" }]);
  });

  test("GIVEN its roles WHEN forged THEN it manages pods only in its namespace and volumes cluster-wide", () => {
    const role = ofKind<k8s.V1Role>("Role");
    expect(role.metadata?.namespace).toBe("kube-system");
    expect(role.rules?.map((r) => r.resources)).toEqual([["pods"]]);
    const clusterRole = ofKind<k8s.V1ClusterRole>("ClusterRole");
    const writes = clusterRole.rules!.filter((r) => r.verbs.includes("create"));
    expect(writes.flatMap((r) => r.resources)).toEqual(["persistentvolumes", "events"]);
  });
});
