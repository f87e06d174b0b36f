/** The declaration of `NamespaceOffloading` (vocabulary.ts says its words). */
import {
  boolean,
  declareResource,
  inPlace,
  integer,
  listOf,
  object,
  replaces,
  resource,
  string,
} from "./vocabulary.js";

export const NAMESPACE_OFFLOADING = declareResource({
  name: "NamespaceOffloading",
  module: "namespace-offloading",
  summary:
    "A consumer namespace, or the namespaces a label selector picks (those made later " +
    "included), whose pods, bound to the virtual nodes of the given peerings, run on their " +
    "providers.",
  inputs: {
    consumer: {
      type: resource("Cluster"),
      description: "The consumer cluster, the one of every peering in `peerings`.",
      required: true,
      changes: {
        consumerClusterId: replaces("another consumer cluster is another offloading"),
        consumerKubeconfig: inPlace("only how pulumi reaches the consumer cluster, which its cluster ID identifies"),
      },
      passes: {
        consumerKubeconfig: "kubeconfig",
        consumerClusterId: "clusterId",
      },
    },
    namespace: {
      type: string(),
      description:
        "The consumer namespace to offload. It must exist; the offloading does not own it. Changing " +
        "it replaces the offloading. Give exactly one of `namespace` and `namespaceSelector`.",
      change: replaces(
        "another namespace is another offloading: the old one's pods and remote namespaces are removed first",
      ),
    },
    namespaceSelector: {
      type: object("NamespaceSelector"),
      description:
        "Offloads every namespace whose labels match (a Kubernetes label selector: `matchLabels` " +
        "and/or `matchExpressions`), including namespaces made or labelled later: the consumer's " +
        "agent offloads them as they appear, and withdraws a namespace that stops matching, with no " +
        "`pulumi up`. `kube-*` namespaces and the project's own are never selected. A change " +
        "updates in place.",
      change: inPlace(
        "namespaces that match from then on are offloaded, those that no longer match have their pods and remote namespaces removed",
      ),
    },
    peerings: {
      type: listOf(resource("Peering")),
      description:
        "The peerings (of `consumer`) whose virtual nodes the namespace's pods may be scheduled on; " +
        "the namespace is made on each of their providers. A change updates in place: a peering " +
        "left out has the namespace's pods and remote namespace removed.",
      required: true,
      changes: {
        virtualNodes: inPlace(
          "the namespace is offloaded to the providers of the new set of peerings; those left out have their pods and remote namespace removed",
        ),
      },
      passes: {
        virtualNodes: "*.virtualNodeName",
      },
    },
    naming: {
      type: string("suffixed", "same"),
      description:
        "How the namespace is named on the providers: `suffixed` (default) adds `-<consumer cluster " +
        "id>`, so that two consumers' namespaces of one name never collide; `same` keeps the name, " +
        "and a provider refuses it when the name is already taken there. Changing it replaces the " +
        "offloading.",
      default: '"suffixed"',
      change: replaces(
        "the remote namespace's name changes: the old remote namespaces (and the pods in them) are removed, new ones are made",
      ),
    },
    timeoutSeconds: {
      type: integer,
      description: "Deadline of each operation (create, update, delete), in seconds.",
      default: "300",
      change: inPlace("only the deadline of later operations"),
    },
    force: {
      type: boolean,
      description:
        "On delete with a provider unreachable (found by one short look: a TLS handshake and one request, a few seconds), " +
        "remove the consumer's side anyway: the NamespaceOffloading, and the namespace's pods on " +
        "that provider's virtual node (removed at once, as no kubelet will), and list what stays on " +
        "the provider (the remote namespace, the ConfigMaps and Secrets reflected into it, the " +
        "pods). Without it, such a delete (or an update) fails at once and changes nothing. " +
        "Changing it updates in place without contacting any cluster, so it can be set after the " +
        "provider is gone: `pulumi up`, then `pulumi destroy`.",
      default: "false",
      change: inPlace(
        "only what a later delete does when a provider cannot be reached; update records it and contacts no cluster",
      ),
    },
    podOffloading: {
      type: string("local-and-remote", "remote", "local"),
      description:
        "Where the namespace's pods may run, applied by the consumer's API server to every pod " +
        "created in the namespace, so workloads need no edit: `local-and-remote` (they tolerate the " +
        "virtual nodes' taint; the scheduler picks real or virtual nodes), `remote` (virtual nodes " +
        "only) or `local` (the consumer's own nodes only; the namespace is still made on the " +
        "providers). A change updates in place and applies to pods created from then on.",
      default: '"local-and-remote"',
      change: inPlace(
        "pods created from then on are placed by the new policy; pods already running stay where they are " +
          "(a state made by a release that recorded no policy gets the default applied and recorded)",
      ),
    },
    serviceAccountTokens: {
      type: string("consumer", "none"),
      description:
        "The token an offloaded pod that mounts its service account's token gets: `consumer`, a " +
        "token of that account in the consumer's cluster (asked for by the consumer's agent, bound " +
        "to the pod, kept fresh), with `kubernetes.default` leading to the consumer's API server " +
        "through the tunnel, so in-cluster clients work on the consumer as they would at home; or " +
        "`none`, no token at all. Never one of the provider's. A provider's administrator can read " +
        "such a token while the pod lives and act with its rights on the consumer: choose `none` " +
        "for a provider you do not trust that far. A change applies to pods offloaded from then on.",
      default: '"consumer"',
      change: inPlace(
        "pods offloaded from then on get the new kind of token; pods already running keep theirs until they are replaced",
      ),
    },
  },
  outputs: {
    selectorName: {
      type: string(),
      description: "With `namespaceSelector`: the name of the selector object the consumer's agent follows.",
      internal: true,
    },
    remoteNamespace: {
      type: string(),
      description: "The namespace's name on every provider; empty with `namespaceSelector`.",
      required: true,
    },
    remotes: {
      type: listOf(object("RemoteNamespaceStatus")),
      description: "One entry per peering: what its provider answered (with `namespace`).",
      required: true,
    },
    status: {
      type: string(),
      description: "`Ready`, or what the last refresh found wrong (a remote namespace gone, a provider out of reach).",
      required: true,
      repairedByUpdate:
        "the last create stopped half-way, or pulumi refresh found a remote namespace missing: " +
        "update writes the offloading again and waits for every provider",
    },
    selectedNamespaces: {
      type: listOf(object("SelectedNamespaceStatus")),
      description:
        "With `namespaceSelector`: one entry per namespace it offloads, or withdraws, as of the last create, update or refresh.",
    },
  },
});
