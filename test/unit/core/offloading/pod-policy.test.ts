import type { V1PodSpec } from "@kubernetes/client-node";
import { podRequests, refuseOverOffer } from "../../../../core/offloading/budget.js";
import { refuseRemoteNamespace, forgeRemoteNamespace } from "../../../../core/offloading/namespaces.js";
import { refusePodSpec } from "../../../../core/offloading/pod-policy.js";

const plain: V1PodSpec = { containers: [{ name: "app", image: "registry.example/app:1" }] };

describe("refusePodSpec", () => {
  test("GIVEN a plain pod THEN it is allowed", () => {
    expect(refusePodSpec(plain)).toBeUndefined();
    // Volumes of its own, and a claim (which the provider checks is one it holds for the consumer).
    const own = ["emptyDir", "configMap", "secret", "downwardAPI", "persistentVolumeClaim"].map((source) => ({
      name: source.toLowerCase(),
      [source]: source === "persistentVolumeClaim" ? { claimName: "data" } : {},
    }));
    expect(refusePodSpec({ ...plain, volumes: own })).toBeUndefined();
    expect(refusePodSpec({ ...plain, serviceAccountName: "default" })).toBeUndefined();
    // An account of the consumer's: its token is the consumer's (forgeRemotePod runs the pod as the provider's default).
    expect(refusePodSpec({ ...plain, serviceAccountName: "builder" })).toBeUndefined();
  });

  test.each<[string, V1PodSpec, string, string]>([
    [
      "a privileged container",
      { containers: [{ name: "app", securityContext: { privileged: true } }] },
      "Privileged",
      'containers "app": securityContext.privileged is true',
    ],
    [
      "an init container asking for a capability",
      {
        containers: [{ name: "app" }],
        initContainers: [{ name: "setup", securityContext: { capabilities: { add: ["NET_ADMIN"] } } }],
      },
      "Privileged",
      'initContainers "setup": securityContext.capabilities.add asks for NET_ADMIN',
    ],
    ["the host's network", { ...plain, hostNetwork: true }, "HostNamespace", "spec.hostNetwork is true"],
    ["the host's pids", { ...plain, hostPID: true }, "HostNamespace", "spec.hostPID is true"],
    [
      "a host path",
      { ...plain, volumes: [{ name: "root", hostPath: { path: "/" } }] },
      "HostPath",
      'volume "root" mounts hostPath /',
    ],
    [
      "a network share",
      { ...plain, volumes: [{ name: "share", nfs: { server: "10.0.0.5", path: "/exports" } }] },
      "VolumeSource",
      'volume "share" has source nfs',
    ],
    [
      "an ephemeral claim of a class the pod names",
      {
        ...plain,
        volumes: [{ name: "scratch", ephemeral: { volumeClaimTemplate: { spec: { storageClassName: "admins" } } } }],
      },
      "VolumeSource",
      'volume "scratch" has source ephemeral',
    ],
    [
      "a host port",
      { containers: [{ name: "app", ports: [{ containerPort: 80, hostPort: 8080 }] }] },
      "HostPort",
      'containers "app": ports asks for hostPort 8080',
    ],
    [
      "a projected service account token (an identity on the provider)",
      {
        ...plain,
        volumes: [
          {
            name: "vault",
            projected: {
              sources: [{ configMap: { name: "x" } }, { serviceAccountToken: { path: "t", audience: "vault" } }],
            },
          },
        ],
      },
      "ServiceAccountToken",
      'volume "vault" projects a service account token',
    ],
    ["no container", { containers: [] }, "Invalid", "spec.containers is empty"],
  ])("GIVEN %s THEN it is refused with a reason naming the field", (_what, spec, reason, message) => {
    const refusal = refusePodSpec(spec);
    expect(refusal?.reason).toBe(reason);
    expect(refusal?.message).toContain(message);
  });
});

describe("podRequests and refuseOverOffer", () => {
  test("GIVEN two containers and a larger init container THEN the pod takes the sum, or the init container's when more", () => {
    expect(
      podRequests({
        containers: [
          { name: "a", resources: { requests: { cpu: "100m", memory: "64Mi" } } },
          { name: "b", resources: { requests: { cpu: "200m", memory: "64Mi" } } },
        ],
        initContainers: [{ name: "i", resources: { requests: { cpu: "1", memory: "32Mi" } } }],
      }),
    ).toEqual({ cpuMillis: 1000, memoryBytes: 128 * 2 ** 20 });
  });

  const offer = { cpu: "1", memory: "1Gi", pods: 2 };
  const small = { cpuMillis: 300, memoryBytes: 256 * 2 ** 20 };

  test("GIVEN room left THEN the pod fits", () => {
    expect(refuseOverOffer(offer, [small], small)).toBeUndefined();
  });

  test("GIVEN the pod count reached THEN the next pod is refused, naming the count", () => {
    expect(refuseOverOffer(offer, [small, small], small)).toEqual({
      reason: "ExceedsOffer",
      message: "the offer allows 2 pod(s), and 2 already run",
    });
  });

  test("GIVEN cpu or memory over the offer THEN the pod is refused, naming what and how much", () => {
    expect(refuseOverOffer(offer, [small], { cpuMillis: 800, memoryBytes: 0 })?.message).toBe(
      "the pod requests cpu 800m; the offer has 1, of which 300m is in use",
    );
    expect(refuseOverOffer(offer, [], { cpuMillis: 0, memoryBytes: 2 * 2 ** 30 })?.message).toBe(
      "the pod requests memory 2Gi; the offer has 1Gi, of which 0 is in use",
    );
  });
});

describe("refuseRemoteNamespace", () => {
  test("GIVEN a free name THEN the consumer may have it, and again once it is its own", () => {
    expect(refuseRemoteNamespace("shop-0123456789abcdef", undefined, "0123456789abcdef")).toBeUndefined();
    const own = forgeRemoteNamespace("shop-0123456789abcdef", "0123456789abcdef");
    expect(refuseRemoteNamespace("shop-0123456789abcdef", own, "0123456789abcdef")).toBeUndefined();
  });

  test("GIVEN system names, a name taken by the provider or another consumer, or an invalid name THEN it is refused", () => {
    expect(refuseRemoteNamespace("kube-system", undefined, "c1")?.reason).toBe("Reserved");
    expect(refuseRemoteNamespace("pulumi-liqo-tenant-c2", undefined, "c1")?.reason).toBe("Reserved");
    expect(refuseRemoteNamespace("default", undefined, "c1")?.reason).toBe("Reserved");
    expect(refuseRemoteNamespace("shop", { metadata: { name: "shop" } }, "c1")?.reason).toBe("NameTaken");
    expect(refuseRemoteNamespace("shop", forgeRemoteNamespace("shop", "c2"), "c1")?.reason).toBe("NameTaken");
    expect(refuseRemoteNamespace("Shop_1", undefined, "c1")?.reason).toBe("Invalid");
  });
});
