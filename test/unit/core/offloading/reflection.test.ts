import type { V1Pod, V1PodSpec } from "@kubernetes/client-node";
import { Cidr } from "../../../../core/net/cidr.js";
import {
  CONSUMER_POD_UID_LABEL,
  consumerTokenSecretName,
  forgeConsumerTokenSecret,
  forgeOffloadedPod,
  forgeReflectedSecret,
  forgeRemotePod,
  deadlineChange,
  imageChanges,
  metadataChanges,
  mountsServiceAccountToken,
  ownPodRange,
  peerAddressView,
  peerTunnelAddress,
  portableAnnotations,
  referencedObjects,
  reflectPodStatus,
  refuseConsumerToken,
  remoteNamespaceName,
  SERVICE_ACCOUNT_DIR,
} from "../../../../core/offloading/reflection.js";
import { tenantRequestName } from "../../../../core/api/offloading.js";
import type { TunnelEndpoint } from "../../../../core/api/crds.js";

const consumerPod: V1Pod = {
  metadata: { name: "web-1", namespace: "shop", uid: "uid-1", labels: { app: "web" } },
  spec: {
    nodeName: "liqo-b",
    nodeSelector: { "kubernetes.io/hostname": "liqo-b" },
    tolerations: [{ key: "virtual-node.pulumi-liqo.dev/not-allowed", operator: "Exists" }],
    priorityClassName: "consumer-class",
    serviceAccountName: "default",
    containers: [
      {
        name: "app",
        image: "app:1",
        volumeMounts: [
          { name: "config", mountPath: "/etc/app" },
          { name: "kube-api-access-abcde", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" },
        ],
        env: [{ name: "PASSWORD", valueFrom: { secretKeyRef: { name: "db", key: "password" } } }],
        envFrom: [{ configMapRef: { name: "settings" } }],
      },
    ],
    volumes: [
      { name: "config", configMap: { name: "app-config" } },
      { name: "kube-api-access-abcde", projected: { sources: [{ configMap: { name: "kube-root-ca.crt" } }] } },
    ],
  },
};

describe("forgeOffloadedPod and forgeRemotePod", () => {
  test("GIVEN a consumer pod THEN the request drops what names the consumer's cluster, and keeps the workload", () => {
    const request = forgeOffloadedPod(consumerPod, "shop-c1", "pulumi-liqo-tenant-c1");
    expect(request.metadata.name).toBe("shop-c1.web-1");
    expect(request.metadata.namespace).toBe("pulumi-liqo-tenant-c1");
    expect(request.spec).toMatchObject({ namespace: "shop-c1", name: "web-1", consumerUid: "uid-1" });
    const spec = request.spec.pod;
    for (const field of ["nodeName", "nodeSelector", "tolerations", "priorityClassName"]) {
      expect(spec).not.toHaveProperty(field);
    }
    expect(spec.volumes?.map((v) => v.name)).toEqual(["config"]);
    expect(spec.containers[0]!.volumeMounts?.map((m) => m.name)).toEqual(["config"]);
  });

  test("GIVEN a request that names a node and another service account THEN the pod made of it has neither, and the project's labels win", () => {
    const request = forgeOffloadedPod(consumerPod, "shop-c1", "pulumi-liqo-tenant-c1");
    request.spec.pod = { ...request.spec.pod, nodeName: "control-plane", serviceAccountName: "admin" };
    request.spec.labels = { [CONSUMER_POD_UID_LABEL]: "someone-else", app: "web" };
    const pod = forgeRemotePod(request, "c1");
    expect(pod.spec?.nodeName).toBeUndefined();
    expect(pod.spec?.serviceAccountName).toBe("default");
    // Whatever the request says, no token of the provider's is mounted.
    expect(pod.spec?.automountServiceAccountToken).toBe(false);
    const asking = forgeRemotePod(
      { ...request, spec: { ...request.spec, pod: { ...request.spec.pod, automountServiceAccountToken: true } } },
      "c1",
    );
    expect(asking.spec?.automountServiceAccountToken).toBe(false);
    expect(pod.metadata?.labels?.[CONSUMER_POD_UID_LABEL]).toBe("uid-1");
    expect(pod.metadata?.labels?.["app"]).toBe("web");
  });

  test("GIVEN the provider's DNS Service THEN the pod asks its names there, with its consumer namespace's search list, its own entries after", () => {
    const request = forgeOffloadedPod(consumerPod, "shop-c1", "pulumi-liqo-tenant-c1");
    const dns = { nameserver: "10.96.0.53", consumerNamespace: "shop" };
    expect(forgeRemotePod(request, "c1", undefined, dns).spec).toMatchObject({
      dnsPolicy: "None",
      dnsConfig: {
        nameservers: ["10.96.0.53"],
        searches: ["shop.svc.cluster.local", "svc.cluster.local", "cluster.local"],
        options: [{ name: "ndots", value: "5" }],
      },
    });
    const withOwn = {
      ...request,
      spec: {
        ...request.spec,
        pod: {
          ...request.spec.pod,
          dnsConfig: { searches: ["corp.example"], options: [{ name: "ndots", value: "2" }] },
        },
      },
    };
    expect(forgeRemotePod(withOwn, "c1", undefined, dns).spec?.dnsConfig).toEqual({
      nameservers: ["10.96.0.53"],
      searches: ["shop.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example"],
      options: [
        { name: "ndots", value: "5" },
        { name: "ndots", value: "2" },
      ],
    });
    // A pod that chose its own resolver keeps it; without the Service (an earlier release's install), the provider's DNS.
    for (const dnsPolicy of ["None", "Default"]) {
      const own = { ...request, spec: { ...request.spec, pod: { ...request.spec.pod, dnsPolicy } } };
      expect(forgeRemotePod(own, "c1", undefined, dns).spec?.dnsPolicy).toBe(dnsPolicy);
    }
    expect(forgeRemotePod(request, "c1").spec?.dnsConfig).toBeUndefined();
  });
});

describe("the consumer's token on the provider", () => {
  const withToken = {
    ...consumerPod,
    spec: {
      ...consumerPod.spec!,
      initContainers: [{ name: "init", image: "init:1", env: [{ name: "KUBERNETES_SERVICE_HOST", value: "mine" }] }],
      volumes: [
        ...consumerPod.spec!.volumes!.slice(0, 1),
        {
          name: "kube-api-access-abcde",
          projected: {
            sources: [{ serviceAccountToken: { path: "token" } }, { configMap: { name: "kube-root-ca.crt" } }],
          },
        },
      ],
    },
  };

  test("GIVEN a pod that mounts its token (or not) THEN the consumer's agent asks for the consumer's token (or not)", () => {
    expect(mountsServiceAccountToken(withToken.spec)).toBe(true);
    expect(mountsServiceAccountToken(consumerPod.spec!)).toBe(false); // its kube-api-access volume has no token
    expect(mountsServiceAccountToken({ containers: [] })).toBe(false);
    const request = forgeOffloadedPod(withToken, "shop-c1", "t", { consumerToken: true });
    expect(request.spec.consumerToken).toBe(true);
    expect(forgeOffloadedPod(withToken, "shop-c1", "t").spec.consumerToken).toBeUndefined();
  });

  test(
    "GIVEN a request for the consumer's token and the tunnel's address THEN every container mounts that Secret where " +
      "a kubelet mounts a token, and kubernetes.default leads through the tunnel",
    () => {
      const request = forgeOffloadedPod(withToken, "shop-c1", "t", { consumerToken: true });
      const pod = forgeRemotePod(request, "c1", "169.254.88.2");
      const spec = pod.spec!;
      expect(spec.automountServiceAccountToken).toBe(false);
      expect(spec.serviceAccountName).toBe("default");
      // The Secret's name is derived from the uid by the provider, never taken from the request.
      expect(spec.volumes?.find((v) => v.secret)?.secret?.secretName).toBe(consumerTokenSecretName("uid-1"));
      expect(spec.volumes?.some((v) => v.projected?.sources?.some((s) => s.serviceAccountToken))).toBe(false);
      for (const container of [...spec.containers, ...spec.initContainers!]) {
        expect(container.volumeMounts).toContainEqual({
          name: "kube-api-access-consumer",
          mountPath: SERVICE_ACCOUNT_DIR,
          readOnly: true,
        });
      }
      expect(spec.hostAliases?.[0]).toEqual({
        ip: "169.254.88.2",
        hostnames: ["kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"],
      });
      const env = (container: { env?: { name: string; value?: string }[] }) =>
        Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value]));
      expect(env(spec.containers[0]!)).toMatchObject({
        KUBERNETES_SERVICE_HOST: "kubernetes.default.svc",
        KUBERNETES_SERVICE_PORT: "6443",
      });
      // A variable the pod sets itself stays its own.
      expect(env(spec.initContainers![0]!)["KUBERNETES_SERVICE_HOST"]).toBe("mine");
    },
  );

  test("GIVEN a request for the consumer's token and no tunnel address yet THEN it waits, refused for now, and no token is mounted", () => {
    const request = forgeOffloadedPod(withToken, "shop-c1", "t", { consumerToken: true });
    expect(refuseConsumerToken(request, undefined)?.reason).toBe("TunnelNotReady");
    expect(refuseConsumerToken(request, "169.254.88.2")).toBeUndefined();
    expect(refuseConsumerToken(forgeOffloadedPod(withToken, "shop-c1", "t"), undefined)).toBeUndefined();
    expect(forgeRemotePod(request, "c1").spec?.volumes?.some((v) => v.secret)).toBe(false);
  });

  test("GIVEN a token THEN its Secret holds token, ca.crt and the consumer's namespace, labelled for its pod, with when to refresh it", () => {
    const refreshAt = new Date("2026-11-26T12:00:00Z");
    const secret = forgeConsumerTokenSecret(
      { pod: { name: "web-1", uid: "uid-1", namespace: "shop" }, token: "tok", caCert: "PEM", refreshAt },
      "shop-c1",
    );
    expect(secret.metadata).toMatchObject({ name: "pulumi-liqo-token-uid-1", namespace: "shop-c1" });
    expect(secret.metadata?.labels?.[CONSUMER_POD_UID_LABEL]).toBe("uid-1");
    expect(secret.type).toBe("Opaque");
    const decoded = Object.fromEntries(
      Object.entries(secret.data!).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]),
    );
    expect(decoded).toEqual({ token: "tok", "ca.crt": "PEM", namespace: "shop" });
    expect(Object.values(secret.metadata!.annotations!)).toEqual(["2026-11-26T12:00:00.000Z"]);
  });
});

describe("reflectPodStatus", () => {
  const view = { real: Cidr.parse("10.100.0.0/16"), asSeen: Cidr.parse("10.64.0.0/16") };

  test("GIVEN a running provider pod in an overlapping CIDR THEN the consumer sees it running at the remapped address", () => {
    const status = reflectPodStatus(
      { phase: "Running", podIP: "10.100.1.7", conditions: [{ type: "Ready", status: "True" }] },
      view,
      undefined,
    );
    expect(status.phase).toBe("Running");
    expect(status.podIP).toBe("10.64.1.7");
    expect(status.podIPs).toEqual([{ ip: "10.64.1.7" }]);
    expect(status.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual(["Ready=True", "Offloaded=True"]);
  });

  test("GIVEN an address outside the provider's pod CIDR, or no view yet THEN no address is shown", () => {
    expect(reflectPodStatus({ phase: "Running", podIP: "192.168.1.1" }, view, undefined).podIP).toBeUndefined();
    expect(reflectPodStatus({ phase: "Running", podIP: "10.100.1.7" }, undefined, undefined).podIP).toBeUndefined();
  });
});

describe("what goes with a pod", () => {
  test("GIVEN volumes, env and envFrom THEN exactly the ConfigMaps and Secrets they read are found", () => {
    expect(referencedObjects(consumerPod.spec!)).toEqual({
      configMaps: ["app-config", "kube-root-ca.crt", "settings"],
      secrets: ["db"],
    });
  });

  test("GIVEN a service account token Secret THEN it is never reflected", () => {
    expect(
      forgeReflectedSecret({ metadata: { name: "t" }, type: "kubernetes.io/service-account-token" }, "shop-c1"),
    ).toBeUndefined();
    expect(forgeReflectedSecret({ metadata: { name: "db" }, data: { password: "cw==" } }, "shop-c1")?.data).toEqual({
      password: "cw==",
    });
  });

  test("GIVEN the default naming THEN the remote namespace carries the consumer's id, and a name too long is an error naming the namespace", () => {
    expect(remoteNamespaceName("shop", "0123456789abcdef", "suffixed")).toBe("shop-0123456789abcdef");
    expect(remoteNamespaceName("shop", "0123456789abcdef", "same")).toBe("shop");
    expect(() => remoteNamespaceName("n".repeat(50), "0123456789abcdef", "suffixed")).toThrow(
      /remote name of namespace "n+" would be .* at most 63/,
    );
  });
});

describe("tenantRequestName", () => {
  test("GIVEN a short pod name THEN <remote namespace>.<pod name>", () => {
    expect(tenantRequestName("shop-0123456789abcdef", "web-1")).toBe("shop-0123456789abcdef.web-1");
  });

  test(
    "GIVEN the longest pod name in the longest namespace THEN a valid object name, the same each time, and " +
      "distinct for two pods that share the first 236 characters",
    () => {
      const namespace = "n".repeat(63);
      const first = tenantRequestName(namespace, `${"p".repeat(252)}a`);
      const second = tenantRequestName(namespace, `${"p".repeat(252)}b`);
      for (const name of [first, second]) {
        expect(name.length).toBeLessThanOrEqual(253);
        expect(name).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
      }
      expect(tenantRequestName(namespace, `${"p".repeat(252)}a`)).toBe(first);
      expect(first).not.toBe(second);
    },
  );

  test("GIVEN a cut that would end in a dot THEN the dot is dropped before the digest", () => {
    const name = tenantRequestName("x".repeat(235), "y".repeat(30));
    expect(name).toMatch(/^x{235}\.[0-9a-f]{16}$/);
  });
});

describe("imageChanges", () => {
  const spec = (web: string, init?: string): V1PodSpec => ({
    containers: [
      { name: "web", image: web },
      { name: "sidecar", image: "sidecar:1" },
    ],
    ...(init ? { initContainers: [{ name: "setup", image: init }] } : {}),
  });

  test("GIVEN the same images THEN there is nothing to change", () => {
    expect(imageChanges(spec("web:1", "setup:1"), spec("web:1", "setup:1"))).toEqual([]);
  });

  test("GIVEN a container's and an init container's new images THEN each is named, with its list", () => {
    expect(imageChanges(spec("web:1", "setup:1"), spec("web:2", "setup:2"))).toEqual([
      { list: "containers", name: "web", image: "web:2" },
      { list: "initContainers", name: "setup", image: "setup:2" },
    ]);
  });

  test("GIVEN a container the running pod does not have THEN it is no image change (a pod gains no container)", () => {
    const wanted: V1PodSpec = { containers: [...spec("web:1").containers, { name: "extra", image: "extra:1" }] };
    expect(imageChanges(spec("web:1"), wanted)).toEqual([]);
  });
});

describe("deadlineChange", () => {
  const pod = (activeDeadlineSeconds?: number): V1PodSpec => ({
    containers: [{ name: "web", image: "web:1" }],
    ...(activeDeadlineSeconds !== undefined ? { activeDeadlineSeconds } : {}),
  });

  test("GIVEN a deadline set or shortened THEN it is the change; GIVEN the same or none THEN there is none", () => {
    expect(deadlineChange(pod(), pod(30))).toBe(30);
    expect(deadlineChange(pod(600), pod(5))).toBe(5);
    expect(deadlineChange(pod(30), pod(30))).toBeUndefined();
    expect(deadlineChange(pod(30), pod())).toBeUndefined();
  });
});

describe("peerAddressView and ownPodRange (this cluster's end of a tunnel)", () => {
  const endpoint = (namespace: string, remoteClusterId: string, status: TunnelEndpoint["status"]): TunnelEndpoint =>
    ({
      metadata: { namespace, name: `to-${remoteClusterId}` },
      spec: { remoteClusterId, remote: { podCidr: "10.150.0.0/16" } },
      status,
    }) as TunnelEndpoint;
  const answered = { phase: "Connected", podCidr: "10.100.0.0/16", remotePodCidrAsSeen: "10.71.0.0/16" } as const;

  test("GIVEN the end in the system namespace (written by this cluster's admin) THEN it gives the view and the own range", () => {
    const ends = [endpoint("pulumi-liqo-system", "p1", answered)];
    expect(peerAddressView(ends, "p1")).toEqual({
      real: Cidr.parse("10.150.0.0/16"),
      asSeen: Cidr.parse("10.71.0.0/16"),
      connected: true,
    });
    expect(ownPodRange(ends, "p1")).toEqual(Cidr.parse("10.100.0.0/16"));
  });

  test("GIVEN ends in tenant namespaces THEN only the peer's own counts, and none its gateway refused", () => {
    const ofOther = endpoint("pulumi-liqo-tenant-c2", "c1", answered);
    expect(peerAddressView([ofOther], "c1")).toBeUndefined();
    const own = endpoint("pulumi-liqo-tenant-c1", "c1", { ...answered, phase: "Pending" });
    expect(peerAddressView([ofOther, own], "c1")?.connected).toBe(false);
    expect(
      peerAddressView([endpoint("pulumi-liqo-tenant-c1", "c1", { ...answered, phase: "Refused" })], "c1"),
    ).toBeUndefined();
    expect(peerAddressView([endpoint("pulumi-liqo-system", "c1", { phase: "Pending" })], "c1")).toBeUndefined();
  });

  test("GIVEN the peer's tunnel address in this end's status THEN it is where the consumer's API answers its pods; another tenant's end gives none", () => {
    const own = endpoint("pulumi-liqo-tenant-c1", "c1", { ...answered, remoteTunnelAddress: "169.254.64.2" });
    expect(peerTunnelAddress([own], "c1")).toBe("169.254.64.2");
    expect(peerTunnelAddress([endpoint("pulumi-liqo-tenant-c2", "c1", own.status)], "c1")).toBeUndefined();
    expect(peerTunnelAddress([endpoint("pulumi-liqo-tenant-c1", "c1", answered)], "c1")).toBeUndefined();
  });
});

describe("a pod's labels and annotations across the peering", () => {
  test("GIVEN annotations of Kubernetes' own prefixes (AppArmor, seccomp, kubectl) THEN they stay with the consumer", () => {
    expect(
      portableAnnotations({
        "container.apparmor.security.beta.kubernetes.io/app": "unconfined",
        "seccomp.security.alpha.kubernetes.io/pod": "unconfined",
        "kubectl.kubernetes.io/restartedAt": "2026-11-26T08:00:00Z",
        "k8s.io/anything": "x",
        "kubernetes.io/description": "x",
        "example.com/owner": "team-a",
        "notkubernetes.io/x": "kept",
        plain: "kept",
      }),
    ).toEqual({ "example.com/owner": "team-a", "notkubernetes.io/x": "kept", plain: "kept" });
  });

  test("GIVEN the provider's pod and its request WHEN they differ THEN the merge patch sets, changes and removes just that", () => {
    const live = { labels: { app: "web", tier: "old", gone: "x" }, annotations: { a: "1" } };
    expect(metadataChanges(live, { labels: { app: "web", tier: "new" }, annotations: { a: "1", b: "2" } })).toEqual({
      labels: { tier: "new", gone: null },
      annotations: { b: "2" },
    });
    expect(metadataChanges(live, live)).toBeUndefined();
    expect(metadataChanges({}, {})).toBeUndefined();
  });

  test("GIVEN a request that names an AppArmor annotation WHEN the provider makes its pod THEN the pod has none", () => {
    const request = forgeOffloadedPod(consumerPod, "shop-b1", "pulumi-liqo-tenant-b1");
    request.spec.annotations = { "container.apparmor.security.beta.kubernetes.io/app": "unconfined", note: "hi" };
    expect(forgeRemotePod(request, "b1").metadata?.annotations).toEqual({ note: "hi" });
  });
});
