/** The declaration of `Cluster` (vocabulary.ts says its words). */
import { boolean, declareResource, inPlace, integer, listOf, object, string } from "./vocabulary.js";

export const CLUSTER = declareResource({
  name: "Cluster",
  module: "cluster",
  summary:
    "One cluster that takes part in peerings: installs the namespace, CRDs, cluster id and auth service TLS, and deploys or verifies the agent.",
  inputs: {
    name: {
      type: string(),
      description:
        "The cluster's name: a DNS label of at most 32 characters. Virtual nodes standing for this cluster are named after it (`liqo-<name>`).",
      required: true,
      change: inPlace(
        "the cluster's identity record takes the new name; its cluster ID stays, so its peerings and their virtual nodes stay",
      ),
    },
    kubeconfig: {
      type: string(),
      description:
        "Kubeconfig with rights to install the project's namespace, CRDs and RBAC. Kept as a Pulumi secret; never logged.",
      required: true,
      secret: true,
      change: inPlace(
        "only how pulumi reaches the cluster; install runs again through it and keeps the cluster ID it finds",
      ),
    },
    podCidr: {
      type: string(),
      description:
        "The cluster's pod CIDR, which its gateway announces to peers. Left out, it is read from " +
        "what the cluster declares: its CNI's pool (Flannel, Calico, Cilium), the controller " +
        "manager's `--cluster-cidr` where it runs as a pod, kubeadm's `podSubnet`; only when none " +
        "is there, the smallest block holding every node's `spec.podCIDRs`, with a warning. Preview " +
        "(or create, when the cluster cannot be read at preview) fails naming this input when " +
        "nothing is there: EKS with the VPC CNI gives nodes no pod CIDR, and there it is the VPC's CIDR.",
      default: "detected",
      example: '"10.244.0.0/16"',
      change: inPlace(
        "the cluster's identity records it and its gateway announces it; a peer routes to it once that peer's tunnel converges again",
      ),
    },
    serviceCidr: {
      type: string(),
      description:
        "The cluster's service CIDR. Left out, it is read from the cluster: its default " +
        "`ServiceCIDR` object (Kubernetes 1.33 and later), else the API server's " +
        "`--service-cluster-ip-range` where it runs as a pod, else kubeadm's `serviceSubnet`; " +
        "preview or create fails naming this input when none is there.",
      default: "detected",
      example: '"10.96.0.0/12"',
      change: inPlace("the cluster's identity records it; its gateway never lets a peer's range be seen under it"),
    },
    externalCidr: {
      type: string(),
      description:
        "The cluster's external CIDR, if it exposes addresses beyond its pods (e.g. node or load " +
        "balancer addresses) to peers: its gateway announces it, and peers route it into the " +
        "tunnel, remapped where it overlaps their own ranges.",
      default: "none",
      change: inPlace(
        "the cluster's identity records it and its gateway announces it; a peer routes to it once that peer's tunnel converges again",
      ),
    },
    apiServerUrl: {
      type: string(),
      description:
        "API server URL as consumers reach it, when it differs from the kubeconfig's (NAT, a load balancer).",
      default: "the kubeconfig's server",
      change: inPlace(
        "the cluster's identity records the new URL; identities its auth service issues from then on point at it",
      ),
    },
    authService: {
      type: object("Endpoint"),
      description: "How the auth service is reached.",
      default: "the API server's host, port 8443",
      change: inPlace(
        "authUrl follows; the auth service's certificate is made anew (with a new CA) only if it " +
          "does not cover the new address, and a deployed agent listens on the new port",
      ),
    },
    gateway: {
      type: object("Gateway"),
      description: "How the WireGuard gateway is reached, and exposed when deployed.",
      default: "the API server's host, UDP port 51820",
      change: inPlace(
        "the gatewayEndpoint output follows, and a deployed gateway's Service (or host port) is " +
          "applied again; a tunnel's own inputs say where its gateway serves",
      ),
    },
    agent: {
      type: object("Agent"),
      description:
        "Where the agent comes from. With an `image`, `Cluster` deploys it (the control agent, the " +
        "gateway and the route agent, each with its own ServiceAccount and least-privilege RBAC, " +
        "and Services exposing the auth service and the gateway) and waits for them to roll out; " +
        "without one, an agent must already run in the cluster (a local cluster started with " +
        "`--host-agent`), and `Cluster` verifies it.",
      change: inPlace(
        "a new image rolls the control agent, the gateway and the route agent in place (peerings " +
          "stay; the gateway's keys are in Secrets), a new exposure reapplies the auth service's " +
          "Service (without an image, the agent running is only checked)",
      ),
    },
    timeoutSeconds: {
      type: integer,
      description: "How long install and the agent check may take, in seconds.",
      default: "300",
      change: inPlace("only the deadline of later operations; install runs again as it is"),
    },
    force: {
      type: boolean,
      description:
        "Uninstall on delete even while peerings still use the cluster; and with the cluster " +
        "unreachable (found by one short look: a TLS handshake and one request, a few seconds), leave " +
        "the stack anyway and list what its install leaves there. Without it, such a delete fails at " +
        "once and changes nothing. Changing it updates in place without contacting the cluster, so it " +
        "can be set after the cluster is gone: `pulumi up`, then `pulumi destroy`.",
      default: "false",
      change: inPlace(
        "only what a later delete does (peerings still using the cluster, the cluster out of reach); update records it and contacts no cluster",
      ),
    },
  },
  outputs: {
    clusterId: {
      type: string(),
      description: "Stable id of the cluster, made once at install.",
      required: true,
    },
    name: {
      type: string(),
      description: "The cluster's name.",
      required: true,
    },
    kubeconfig: {
      type: string(),
      description: "The kubeconfig (secret).",
      required: true,
      secret: true,
    },
    apiServerUrl: {
      type: string(),
      description: "API server URL as consumers reach it.",
      required: true,
    },
    authUrl: {
      type: string(),
      description: "URL of the cluster's auth service.",
      required: true,
    },
    authCaCert: {
      type: string(),
      description: "PEM of the CA that signed the auth service's certificate.",
      required: true,
    },
    gatewayEndpoint: {
      type: string(),
      description: "`host:port` of the WireGuard gateway.",
      required: true,
    },
    podCidr: {
      type: string(),
      description: "Pod CIDR: the input, or what was detected.",
      required: true,
    },
    serviceCidr: {
      type: string(),
      description: "Service CIDR: the input, or what was detected.",
      required: true,
    },
    detectedFrom: {
      type: object("DetectedFrom"),
      description:
        "Where each CIDR the inputs left out was read, e.g. `{ podCidr: \"kube-controller-manager's " +
        '--cluster-cidr", serviceCidr: "ServiceCIDR kubernetes" }`; empty when both were given.',
      required: true,
    },
    nodesOutsidePodCidr: {
      type: listOf(string()),
      description:
        "The nodes whose pod range podCidr does not hold, each as `name range` (e.g. `n3 10.245.0.0/24`), as of " +
        "the last up or refresh: peerings do not route their pods. Empty when every node is inside; a refresh " +
        "that finds one shows it as a change, and the row warns.",
    },
    kubernetesVersion: {
      type: string(),
      description:
        "The Kubernetes version the cluster's API server reported at the last up, e.g. `v1.37.2`. An install on a " +
        "release outside the supported ones (the last three minor releases) is refused, at preview when the cluster can be read.",
    },
    podPlacement: {
      type: string("MutatingAdmissionPolicy", "MutatingWebhook"),
      description:
        "How the cluster's API server places the pods of its offloaded namespaces: by a MutatingAdmissionPolicy " +
        "(Kubernetes 1.36 and later), or, where none is served (1.35), by a webhook its agent serves, whose pods " +
        "must then run for pods of those namespaces to be created.",
    },
    agentVersion: {
      type: string(),
      description:
        "The build the cluster's agent says it runs, `<version>-<build>` (e.g. `0.2.0-3f2a9c1b7d0e`: the package " +
        "version and the first 12 hex digits of the agent bundle's SHA-256, as the agent image's tag names them), as " +
        "of the last up or refresh; `unknown` from an agent of a release that did not say, `unbundled` from one run " +
        "from the compiled sources.",
    },
    agentImageDigest: {
      type: string(),
      description:
        "The digest (`sha256:…`) of the image the cluster's agent pod runs, as its node's container runtime " +
        "reports it, as of the last up or refresh: the bytes behind agentVersion's tag, wherever the image came " +
        "from. `unknown` when no running agent pod holds the agent's Lease, or its runtime reports no digest.",
    },
  },
  access: {
    type: "ClusterAccess",
    description:
      "How other resources reach this cluster (its kubeconfig is secret): what a program of the " +
      "provider plugin gives as a PeeringToken's cluster, a Peering's consumer or " +
      "providerCluster, a NamespaceOffloading's consumer; this package's TypeScript resources " +
      "take the Cluster itself.",
    fromState: {
      clusterId: "clusterId",
      kubeconfig: "kubeconfig",
      apiServerUrl: "apiServerUrl",
      authUrl: "authUrl",
      authCaCert: "authCaCert",
    },
  },
});
