/**
 * `pulumi import` of a `NamespaceOffloading` of one namespace (made by another stack, by the
 * TypeScript SDK's dynamic resource, or by hand): the ID's object part is the namespace, as the
 * resource's own ID names it, and the consumer's kubeconfig reaches its NamespaceOffloading object.
 * Deciding what the reads found is pure; the reads are ../offloading/namespace-offloading.ts.
 */
import { DEFAULT_POD_OFFLOADING } from "../api/offloading.js";
import type { OffloadingFound } from "../offloading/namespace-offloading.js";
import { remoteNamespaceName } from "../offloading/reflection.js";
import type { Imported } from "./imported.js";
import type { NamespaceOffloadingInputs, NamespaceOffloadingOutputs } from "./namespace-offloading.js";
import { onFirstNeed } from "./steps.js";

/** What an import of a NamespaceOffloading is asked. */
export interface NamespaceOffloadingImport {
  /** The ID's object part: the consumer's namespace. */
  readonly namespace: string;
  /** The consumer's kubeconfig (secret). */
  readonly consumerKubeconfig: string;
  /** The importing resource's URN: an object another resource wrote is taken over from it. */
  readonly urn: string;
  /** How errors name the import, e.g. `NamespaceOffloading import of ID "…"`. */
  readonly label: string;
}

/** The object part a NamespaceOffloading's import ID has, for messages. */
export const OFFLOADING_IMPORT_OBJECT = "<namespace>";

/**
 * The NamespaceOffloading an import finds as `found`, or an error naming the step and the endpoint
 * when there is none to take: no install, or no offloading of that namespace. The peerings it uses
 * are known by their virtual nodes only: the program names them.
 */
export function importedNamespaceOffloading(
  asked: NamespaceOffloadingImport,
  found: OffloadingFound,
): Imported<NamespaceOffloadingInputs, NamespaceOffloadingOutputs> {
  const { server, consumer, offloading } = found;
  const refuse = (step: string, why: string) => new Error(`${asked.label}: ${step} at ${server}: ${why}`);
  if (!consumer)
    throw refuse("reading the consumer's identity", "pulumi-liqo is not installed there: nothing to import");
  if (!offloading)
    throw refuse(
      `reading the NamespaceOffloading of namespace ${asked.namespace}`,
      "there is none: the namespace is not offloaded (a namespace offloaded by label is not importable yet)",
    );
  const { remoteNamespace, virtualNodes, serviceAccountTokens } = offloading.spec;
  const naming = remoteNamespace === asked.namespace ? ("same" as const) : undefined;
  if (!naming && remoteNamespace !== remoteNamespaceName(asked.namespace, consumer.clusterId, "suffixed"))
    throw refuse(
      `reading the NamespaceOffloading of namespace ${asked.namespace}`,
      `its remote namespace ${remoteNamespace} is named neither "same" nor "suffixed": not this project's to import`,
    );
  const podOffloading = found.podOffloading ?? DEFAULT_POD_OFFLOADING;
  const inputs = {
    consumerClusterId: consumer.clusterId,
    namespace: asked.namespace,
    virtualNodes: [...virtualNodes],
    ...(naming ? { naming } : {}),
    ...(podOffloading !== DEFAULT_POD_OFFLOADING ? { podOffloading } : {}),
    ...(serviceAccountTokens ? { serviceAccountTokens } : {}),
  };
  const problems = found.problems ?? [];
  return {
    id: asked.namespace,
    inputs,
    outputs: {
      ...inputs,
      // The outputs record the policy applied, the default included, as an up records it.
      podOffloading,
      consumerKubeconfig: asked.consumerKubeconfig,
      remoteNamespace,
      remotes: offloading.status?.remotes ?? [],
      status: problems.length > 0 ? problems.join("; ") : "Ready",
    },
    unrecovered: [
      {
        input: "consumerKubeconfig",
        why: "a secret the cluster never shows: the state keeps the file's text the ID names only to reach the consumer, the program must give it",
      },
      {
        input: "virtualNodes",
        why: `the Peerings whose virtual nodes are ${virtualNodes.join(", ")}: the cluster keeps the nodes' names, not which resources made them`,
      },
    ],
    untraced: ["timeoutSeconds", "force"],
    ...(found.owner && found.owner !== asked.urn ? { takenFrom: found.owner } : {}),
  };
}

/** The reads, loaded on first need: they bring the Kubernetes client. */
const reads = onFirstNeed(() => ({
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a static import would load it with this module
  ...(require("../offloading/namespace-offloading.js") as typeof import("../offloading/namespace-offloading.js")),
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a static import would load it with this module
  ...(require("../kube/client.js") as typeof import("../kube/client.js")),
}));

/** Imports the NamespaceOffloading of `asked`: reads the consumer (writing nothing). */
export async function importNamespaceOffloading(
  asked: NamespaceOffloadingImport,
): Promise<Imported<NamespaceOffloadingInputs, NamespaceOffloadingOutputs>> {
  const { loadKubeconfig, readOffloadingForImport } = reads();
  const kc = loadKubeconfig(asked.consumerKubeconfig, `${asked.label}: kubeconfig`);
  return importedNamespaceOffloading(asked, await readOffloadingForImport(kc, asked.namespace));
}
