/**
 * The object types the resources' inputs and outputs use, declared once (vocabulary.ts).
 */
import { type TypeDeclaration, integer, listOf, mapOf, number, object, string } from "./vocabulary.js";

/** Every named object type, by its name in the schema (`liqo:index:<name>`). */
/** A tunnel's `serverAddress`, the same in a `Tunnel` and an in-band `Peering`'s `tunnel`. */
export const SERVER_ADDRESS = {
  type: string(),
  description:
    "Address (IP or DNS name) at which the serving side's gateway is reached, on the tunnel's `port`. " +
    "Left out, the dialing side dials the endpoint the serving gateway announces, once it has checked it. " +
    "Give it when the other side reaches that gateway at another address (behind NAT, through a VPN).",
  default: "the serving side's `Cluster`'s `gatewayEndpoint` (read back from its load balancer)",
  example: '"203.0.113.7"',
} as const;

/** How a Service of the agent's (`service`: whose) meets a cloud's load balancer: the same fields in `agent` and `gateway`. */
const loadBalancerFields = (service: string) =>
  ({
    annotations: {
      type: mapOf(string()),
      description:
        `Annotations of ${service}'s Service: how a cloud configures its load balancer (a network load ` +
        "balancer for UDP, an internal one, its scheme). Applied in place; one this input no longer " +
        "lists is removed from the Service.",
      example: '{ "service.beta.kubernetes.io/aws-load-balancer-type": "nlb" }',
    },
    loadBalancerClass: {
      type: string(),
      description:
        `Under \`LoadBalancer\` exposure: which load-balancer implementation serves ${service}'s Service ` +
        "(`spec.loadBalancerClass`, a domain-prefixed name), where a cluster has several. A Service " +
        "cannot change its class: a change deletes the Service and makes it again, and its new " +
        "address is read back.",
      default: "the cluster's default implementation",
    },
    loadBalancerSourceRanges: {
      type: listOf(string()),
      description:
        `Under \`LoadBalancer\` exposure: the CIDRs ${service}'s load balancer lets in ` +
        "(`spec.loadBalancerSourceRanges`); a cloud drops the rest before they reach the cluster.",
      default: "everyone",
      example: '["203.0.113.0/24"]',
    },
  }) as const;

export const TYPES: Readonly<Record<string, TypeDeclaration>> = {
  Endpoint: {
    description: "How a cluster's service is reached.",
    tsNames: { input: "EndpointArgs" },
    fields: {
      address: {
        type: string(),
        description:
          "Address (IP or DNS name) others reach the endpoint at. Given, it wins over what the cluster " +
          "answers; left out with a deployed agent under `LoadBalancer` exposure, it is the address the " +
          "cluster's load balancer gives the endpoint's Service, read back at install.",
        default: "the load balancer's address under `LoadBalancer` exposure, else the API server URL's host",
      },
      port: {
        type: integer,
        description: "Port.",
      },
    },
  },
  Gateway: {
    description: "How the WireGuard gateway is reached, and how a deployed gateway is exposed.",
    tsNames: { input: "GatewayArgs" },
    fields: {
      address: {
        type: string(),
        description:
          "IP or DNS name peers dial. Given, it wins over what the cluster answers; left out with a " +
          "deployed gateway under `LoadBalancer` exposure, it is the address the cluster's load balancer " +
          "gives the gateway's Service, read back at install.",
        default: "the load balancer's address under `LoadBalancer` exposure, else the API server URL's host",
      },
      port: {
        type: integer,
        description: "UDP port the gateway serves on, on its node (a Tunnel's port must be it). Default 51820.",
      },
      exposure: {
        type: string("LoadBalancer", "NodePort", "hostPort"),
        description:
          "How a deployed gateway is exposed to the other gateway: a `LoadBalancer` or `NodePort` " +
          "Service (UDP), or `hostPort`: the port of the node the gateway pod runs on, with no " +
          "Service (peers then dial that node's address). The gateway runs on its node's network, so " +
          "`port` is the port it serves on there; a `Tunnel`'s `port` must be the same. Under " +
          "`LoadBalancer`, install waits for the Service's address (`status.loadBalancer.ingress`) and " +
          "fails within `timeoutSeconds` naming the Service when the cluster gives none.",
        default: '"LoadBalancer"',
      },
      nodePort: {
        type: integer,
        description:
          'With `exposure: "NodePort"`: the node port the gateway\'s Service takes, which `gatewayEndpoint` then names. ' +
          "Left out, the one the cluster picks, read back at install, at a Ready node's external address (else the API server's host).",
        default: "one the cluster picks",
      },
      ...loadBalancerFields("the gateway"),
    },
  },
  Agent: {
    description:
      "The agent's deployment: with an image, `Cluster` deploys the control agent, the gateway and the route agent from it.",
    tsNames: { input: "AgentArgs" },
    fields: {
      image: {
        type: string(),
        description:
          "The agent image: the archive `npm run image` builds (`pulumi-liqo.local/agent:<version>`), " +
          "pushed to a registry the cluster pulls from. One image, three roles: the control agent (a " +
          "Deployment), the gateway (a Deployment of one hostNetwork pod) and the route agent (a " +
          "DaemonSet). A new image rolls them in place; peerings stay and the gateway keeps its keys. " +
          "Without it, an agent must already run in the cluster: when the cluster has neither the " +
          "agent's Deployment nor a fresh agent Lease, the install fails within about 15 s naming " +
          "this input (what it made stays recorded; `pulumi up` with the image set finishes it).",
        default: "none: no agent is deployed",
        example: '"registry.example.com/pulumi-liqo/agent:0.1.0"',
      },
      exposure: {
        type: string("LoadBalancer", "NodePort"),
        description:
          "How the auth service is exposed. Under `LoadBalancer`, install waits for the Service's address " +
          "(`status.loadBalancer.ingress`: an IP or a host name), which `authUrl` then names and the " +
          "auth service's certificate covers, and fails within `timeoutSeconds` naming the Service when " +
          "the cluster gives none (a cluster without a load-balancer implementation: use `NodePort`).",
        default: '"LoadBalancer"',
      },
      nodePort: {
        type: integer,
        description:
          'With `exposure: "NodePort"`: the node port the auth service\'s Service takes, which `authUrl` then names. ' +
          "Left out, the one the cluster picks, read back at install, at a Ready node's external address (else the API server's host).",
        default: "one the cluster picks",
      },
      ...loadBalancerFields("the auth service"),
    },
  },
  ProviderHandover: {
    description: "What a provider hands to a consumer: its PeeringToken's outputs.",
    tsNames: { input: "ProviderHandoverArgs" },
    fields: {
      clusterId: {
        type: string(),
        description: "The provider's cluster id.",
        required: true,
      },
      authUrl: {
        type: string(),
        description: "The provider's auth service URL.",
        required: true,
      },
      authCaCert: {
        type: string(),
        description: "PEM of the CA of the provider's auth service.",
        required: true,
      },
      token: {
        type: string(),
        description: "The peering token.",
        required: true,
        secret: true,
      },
    },
  },
  ResourceRequest: {
    description: "Resources asked of the provider: a share of its free capacity, or fixed amounts.",
    tsNames: { input: "ResourceRequestArgs" },
    fields: {
      sharePercent: {
        type: integer,
        description: "Percentage (1-100) of the provider's free allocatable capacity. Excludes the fixed amounts.",
      },
      cpu: {
        type: string(),
        description: "Fixed CPU.",
        example: '"2" or "500m"',
      },
      memory: {
        type: string(),
        description: "Fixed memory.",
        example: '"4Gi"',
      },
      pods: {
        type: integer,
        description: "Fixed pod count.",
      },
    },
  },
  Taint: {
    description: "A taint for the virtual node.",
    tsNames: { input: "TaintArgs" },
    fields: {
      key: {
        type: string(),
        description: "",
        required: true,
      },
      value: {
        type: string(),
        description: "",
      },
      effect: {
        type: string("NoSchedule", "PreferNoSchedule", "NoExecute"),
        description: "",
        required: true,
      },
    },
  },
  Offer: {
    description: "Amounts a provider offers.",
    tsNames: { output: "Offer" },
    fields: {
      cpu: {
        type: string(),
        description: "",
        required: true,
      },
      memory: {
        type: string(),
        description: "",
        required: true,
      },
      pods: {
        type: integer,
        description: "",
        required: true,
      },
    },
  },
  TunnelSettings: {
    description: "How a tunnel is set up.",
    tsNames: { input: "TunnelSettingsArgs" },
    fields: {
      server: {
        type: string("consumer", "provider"),
        description: "Which side's gateway listens: the reachable one when the other is behind NAT.",
        default: '"provider"',
      },
      serverAddress: SERVER_ADDRESS,
      port: {
        type: integer,
        description: "UDP port the gateways listen on. Changes in place.",
        default: "51820",
      },
      mtu: {
        type: integer,
        description: "MTU of both tunnel interfaces (one value, so the ends cannot disagree). Changes in place.",
        default: "1420",
      },
      keepaliveSeconds: {
        type: integer,
        description: "Seconds between the client's keepalives (keeps a NAT mapping open); 0 sends none.",
        default: "25",
      },
      behindNat: {
        type: listOf(string("consumer", "provider")),
        description:
          "Sides behind NAT. Both is refused (nothing could reach either gateway); the server must not be one.",
        default: "[]",
      },
    },
  },
  TunnelEnd: {
    description: "What one side's gateway reports.",
    tsNames: { output: "TunnelEnd" },
    fields: {
      publicKey: {
        type: string(),
        description: "The gateway's WireGuard public key.",
        required: true,
      },
      endpoint: {
        type: string(),
        description: "host:port where it listens, when it serves.",
      },
      podCidr: {
        type: string(),
        description: "The side's real pod CIDR.",
        required: true,
      },
      remotePodCidrAsSeen: {
        type: string(),
        description: "The other side's pod CIDR as this side sees it.",
        required: true,
      },
      externalCidr: {
        type: string(),
        description: "The side's external CIDR.",
      },
      remoteExternalCidrAsSeen: {
        type: string(),
        description: "The other side's external CIDR as this side sees it.",
      },
      interfaceName: {
        type: string(),
        description: "The WireGuard interface's name.",
        required: true,
      },
      latestHandshake: {
        type: string(),
        description: "Latest handshake, RFC 3339, as of the last create or update.",
      },
      rttMs: {
        type: number,
        description: "Round trip of a probe across the tunnel, ms.",
      },
    },
  },
  TunnelStatus: {
    description: "Both gateways' reports.",
    tsNames: { output: "TunnelStatus" },
    fields: {
      consumer: {
        type: object("TunnelEnd"),
        description: "",
        required: true,
      },
      provider: {
        type: object("TunnelEnd"),
        description: "",
        required: true,
      },
    },
  },
  RemoteNamespaceStatus: {
    description: "What one provider answered for an offloaded namespace.",
    tsNames: { output: "RemoteNamespaceStatus" },
    fields: {
      virtualNode: {
        type: string(),
        description: "The virtual node of the peering.",
        required: true,
      },
      providerClusterId: {
        type: string(),
        description: "That peering's provider.",
      },
      remoteNamespace: {
        type: string(),
        description: "The namespace on that provider.",
        required: true,
      },
      phase: {
        type: string(),
        description:
          "`Ready`, `Pending`, `Refused`, `Missing` (the remote namespace is gone on the provider), " +
          "`Unreachable` (the consumer's agent cannot reach the provider and backs off) or `Error`.",
        required: true,
      },
      message: {
        type: string(),
        description: "Why, when not Ready.",
      },
    },
  },
  DetectedFrom: {
    description: "Where a Cluster's CIDRs left out of its inputs were read.",
    tsNames: { output: "DetectedFrom" },
    fields: {
      podCidr: {
        type: string(),
        description: "Where the pod CIDR was read, when detected.",
      },
      serviceCidr: {
        type: string(),
        description: "Where the service CIDR was read, when detected.",
      },
    },
  },
  NamespaceSelector: {
    description: "A Kubernetes label selector of namespaces: all of matchLabels and matchExpressions must hold.",
    tsNames: { input: "NamespaceSelector" },
    fields: {
      matchLabels: {
        type: mapOf(string()),
        description: "Labels a namespace must carry, with these values.",
      },
      matchExpressions: {
        type: listOf(object("LabelRequirement")),
        description:
          "Requirements on a namespace's labels: `In` and `NotIn` a list of `values`, `Exists`, `DoesNotExist`.",
      },
    },
  },
  LabelRequirement: {
    description: "One requirement on a label.",
    tsNames: { input: "LabelRequirement" },
    fields: {
      key: {
        type: string(),
        description: "The label's key.",
        required: true,
      },
      operator: {
        type: string("In", "NotIn", "Exists", "DoesNotExist"),
        description: "In, NotIn, Exists or DoesNotExist.",
        required: true,
      },
      values: {
        type: listOf(string()),
        description: "The values of In and NotIn.",
      },
    },
  },
  SelectedNamespaceStatus: {
    description: "How far one namespace a selector picked got.",
    tsNames: { output: "SelectedNamespaceStatus" },
    fields: {
      namespace: {
        type: string(),
        description: "The consumer namespace.",
        required: true,
      },
      remoteNamespace: {
        type: string(),
        description: "Its name on the providers.",
        required: true,
      },
      phase: {
        type: string(),
        description:
          "`Ready`, `Pending`, `Withdrawing` (it no longer matches), `Refused` (a provider said no) " +
          "or `Conflict` (offloaded by another resource already, and left as it is).",
        required: true,
      },
      message: {
        type: string(),
        description: "Why, when not Ready.",
      },
    },
  },
  ClusterAccess: {
    description:
      "How another resource reaches a cluster: a Cluster's access output. Resources that act on a " +
      "cluster (PeeringToken, Peering, NamespaceOffloading) take it.",
    tsNames: { input: "ClusterAccess", output: "ClusterAccess" },
    fields: {
      clusterId: {
        type: string(),
        description: "The cluster's id.",
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
      },
      authUrl: {
        type: string(),
        description: "URL of the cluster's auth service.",
      },
      authCaCert: {
        type: string(),
        description: "PEM of the CA that signed the auth service's certificate.",
      },
    },
  },
  PeeringAccess: {
    description: "How a Tunnel or a NamespaceOffloading uses a peering: a Peering's access output.",
    tsNames: { input: "PeeringAccess", output: "PeeringAccess" },
    fields: {
      consumer: {
        type: object("ClusterAccess"),
        description: "The consumer cluster.",
        required: true,
      },
      providerClusterId: {
        type: string(),
        description: "The provider's cluster id.",
        required: true,
      },
      providerClusterName: {
        type: string(),
        description: "The provider's name.",
        required: true,
      },
      tenantNamespace: {
        type: string(),
        description: "The consumer's tenant namespace on the provider.",
        required: true,
      },
      virtualNodeName: {
        type: string(),
        description: "The virtual node in the consumer.",
        required: true,
      },
    },
  },
};
