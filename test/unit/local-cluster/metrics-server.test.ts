/** metrics-server as the local clusters deploy it: the aggregated metrics API, its pod scraping every node at the port the node reports. */
import type * as k8s from "@kubernetes/client-node";
import { forgeMetricsServer } from "../../../local-cluster/metrics-server.js";

describe("metrics-server", () => {
  const objects = forgeMetricsServer("pulumi-liqo.local/metrics-server:1");
  const ofKind = <T>(kind: string): T => objects.find((o) => o.kind === kind) as T;

  test("GIVEN the objects WHEN forged THEN metrics.k8s.io is served by the Service that selects its pod", () => {
    const api = ofKind<{ spec: { group: string; version: string; service: { name: string; namespace: string } } }>(
      "APIService",
    );
    const service = ofKind<k8s.V1Service>("Service");
    const deployment = ofKind<k8s.V1Deployment>("Deployment");
    expect(api.spec).toMatchObject({ group: "metrics.k8s.io", version: "v1beta1" });
    expect(api.spec.service).toMatchObject({ name: service.metadata!.name, namespace: service.metadata!.namespace });
    expect(service.spec?.selector).toEqual(deployment.spec?.template.metadata?.labels);
  });

  test("GIVEN its pod WHEN forged THEN it runs the image given, scrapes each node at its reported port, asks for nothing", () => {
    const container = ofKind<k8s.V1Deployment>("Deployment").spec!.template.spec!.containers[0]!;
    expect(container).toMatchObject({ image: "pulumi-liqo.local/metrics-server:1", imagePullPolicy: "Never" });
    expect(container.args).toEqual(
      expect.arrayContaining(["--kubelet-use-node-status-port", "--kubelet-insecure-tls"]),
    );
    expect(container.resources).toBeUndefined();
    expect(container.securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true });
  });

  test("GIVEN its role WHEN forged THEN it may read node metrics and no more than it needs", () => {
    const roles = objects.filter((o) => o.kind === "ClusterRole") as k8s.V1ClusterRole[];
    const own = roles.find((r) => r.metadata?.name === "system:metrics-server")!;
    expect(own.rules).toEqual([
      { apiGroups: [""], resources: ["nodes/metrics"], verbs: ["get"] },
      { apiGroups: [""], resources: ["pods", "nodes"], verbs: ["get", "list", "watch"] },
    ]);
  });
});
