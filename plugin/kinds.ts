/**
 * The five resources as the plugin serves them: for each type token, the resource's own code (the
 * very object its dynamic shim calls) and how the schema's inputs map onto the inputs that code
 * takes. The schema passes clusters and peerings as `ClusterAccess` and `PeeringAccess` objects
 * (another resource's `access` output), where the TypeScript SDK passes the fields one by one:
 * `from` says, for each such field, where it is in the schema's inputs. Everything else passes
 * under its own name.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { FoundChanges } from "../core/resources/diff-rules.js";
import { clusterChanges, importCluster, pulumiProvider as cluster } from "../core/resources/cluster.js";
import type { Imported } from "../core/resources/imported.js";
import {
  namespaceOffloadingChanges,
  pulumiProvider as namespaceOffloading,
} from "../core/resources/namespace-offloading.js";
import { peeringChanges, pulumiProvider as peering } from "../core/resources/peering.js";
import { importNamespaceOffloading, OFFLOADING_IMPORT_OBJECT } from "../core/resources/namespace-offloading-import.js";
import { importPeering, PEERING_IMPORT_OBJECT } from "../core/resources/peering-import.js";
import { peeringTokenChanges, pulumiProvider as peeringToken } from "../core/resources/peering-token.js";
import { tunnelChanges, pulumiProvider as tunnel } from "../core/resources/tunnel.js";
import { importTunnel, TUNNEL_IMPORT_OBJECT } from "../core/resources/tunnel-import.js";
import { compact, valueAt, type Properties } from "./values.js";
import { RESOURCES, typeTokenOf, type ResourceDeclaration } from "../declarations/index.js";
import { accessFromState, accessTypesOf, drawnInputsOf, secretStateOf } from "../declarations/derived.js";

/** A resource's dynamic provider, over plain property maps (each module types its own inputs). */
export type ResourceCode = Required<pulumi.dynamic.ResourceProvider<Properties, Properties>>;

/** One resource, as the plugin serves it. */
export interface Kind {
  /** The resource's name, e.g. `Peering`: the last part of its type token. */
  readonly name: string;
  /** The resource's code: the same object its dynamic shim calls. */
  readonly code: ResourceCode;
  /** What changed between its state and new inputs, as its code's diff finds it (the code's own rules). */
  readonly changes: (olds: Properties, news: Properties) => FoundChanges;
  /**
   * For each input of the code that the schema holds elsewhere, its path in the schema's inputs
   * (`consumerClusterId` is `consumer.clusterId`; `*` takes a field of each element of a list).
   */
  readonly from: Readonly<Record<string, string>>;
  /**
   * Outputs (top-level) that are secret whatever the program marked. `access` is secret as a whole
   * (it holds a kubeconfig): a secret nested in an object output did not survive Pulumi YAML
   * (v1.25.0 handed it on as an empty object), a whole secret does in every language.
   */
  readonly secretOutputs: readonly string[];
  /** The object the resource hands to the resources that use it (its `access` output), from its outputs. */
  readonly access?: (outputs: Properties) => Properties;
  /** How `pulumi import` reads it, or why it cannot be imported. */
  readonly imports: Importer | { readonly refused: string };
}

/** How `pulumi import` reads a resource by an ID of the form `<object>@<kubeconfig file>` (imports.ts). */
export interface Importer {
  /** What the ID's object part names, for messages: `<clusterId>`. */
  readonly object: string;
  /** Reads the object `object` through `kubeconfig` for the resource of URN `urn`; errors start with `label`. */
  readonly run: (
    object: string,
    kubeconfig: string,
    label: string,
    urn: string,
  ) => Promise<Imported<Properties, Properties>>;
}

/** The resource's code over plain property maps: the modules' own types differ only in their inputs' names. */
const plain = <I, O>(code: pulumi.dynamic.ResourceProvider<I, O>): ResourceCode => code as unknown as ResourceCode;
const changesOver =
  (changes: (olds: never, news: never) => FoundChanges) =>
  (olds: Properties, news: Properties): FoundChanges =>
    changes(olds as never, news as never);

/** An import of a module's own types, over plain property maps. */
const plainImport = <I, O>(found: Imported<I, O>): Imported<Properties, Properties> =>
  found as unknown as Imported<Properties, Properties>;

/** What only code can say of each served resource: its code, its diff, how it is imported. */
const BEHAVIOUR: Readonly<Record<string, Pick<Kind, "code" | "changes" | "imports">>> = {
  Cluster: {
    code: plain(cluster),
    changes: changesOver(clusterChanges),
    imports: {
      object: "<clusterId>",
      run: async (clusterId, kubeconfig, label, urn) =>
        plainImport(await importCluster({ clusterId, kubeconfig, label, urn })),
    },
  },
  PeeringToken: {
    code: plain(peeringToken),
    changes: changesOver(peeringTokenChanges),
    imports: {
      refused:
        "not importable: the cluster keeps only the token's hash, so the token (the secret output its consumers peer " +
        "with) can never be read back; make a new PeeringToken instead (peerings made with the old one keep their identities)",
    },
  },
  Peering: {
    code: plain(peering),
    changes: changesOver(peeringChanges),
    imports: {
      object: PEERING_IMPORT_OBJECT,
      run: async (pair, consumerKubeconfig, label, urn) =>
        plainImport(await importPeering({ pair, consumerKubeconfig, label, urn })),
    },
  },
  Tunnel: {
    code: plain(tunnel),
    changes: changesOver(tunnelChanges),
    imports: {
      object: TUNNEL_IMPORT_OBJECT,
      run: async (pair, consumerKubeconfig, label) =>
        plainImport(await importTunnel({ pair, consumerKubeconfig, label })),
    },
  },
  NamespaceOffloading: {
    code: plain(namespaceOffloading),
    changes: changesOver(namespaceOffloadingChanges),
    imports: {
      object: OFFLOADING_IMPORT_OBJECT,
      run: async (namespace, consumerKubeconfig, label, urn) =>
        plainImport(await importNamespaceOffloading({ namespace, consumerKubeconfig, label, urn })),
    },
  },
};

/** A served resource: its declaration (names, mapping, secrets, access) joined with its behaviour. */
function kindOfDeclaration(declaration: ResourceDeclaration): Kind {
  const access = declaration.access;
  return {
    name: declaration.name,
    ...BEHAVIOUR[declaration.name]!,
    from: drawnInputsOf(declaration),
    secretOutputs: secretStateOf(declaration, accessTypesOf(RESOURCES)),
    ...(access ? { access: (outputs: Properties) => compact(accessFromState(declaration, outputs) ?? {}) } : {}),
  };
}

/** The served resources, by type token. */
export const KINDS: Readonly<Record<string, Kind>> = Object.fromEntries(
  RESOURCES.map((declaration) => [typeTokenOf(declaration), kindOfDeclaration(declaration)]),
);

/** The resource of type token `type`; an error naming it and the ones served otherwise. */
export function kindOf(type: string): Kind {
  const kind = KINDS[type];
  if (!kind) throw new Error(`liqo: no resource of type ${type}; the plugin serves ${Object.keys(KINDS).join(", ")}`);
  return kind;
}

/** The top-level schema inputs that `from` draws on (`consumer`, `peerings`…): the code never takes them as they are. */
const rootsOf = (kind: Kind): Set<string> => new Set(Object.values(kind.from).map((path) => path.split(".")[0]!));

/** The inputs `kind`'s code takes, from the schema's `inputs` (secrets and unknowns kept where they were). */
export function codeInputsOf(kind: Kind, inputs: Properties): Properties {
  const roots = rootsOf(kind);
  const own = Object.fromEntries(Object.entries(inputs).filter(([key]) => !roots.has(key)));
  const drawn = Object.fromEntries(Object.entries(kind.from).map(([key, path]) => [key, valueAt(inputs, path)]));
  return compact({ ...own, ...drawn });
}

/**
 * The schema's name for input path `path` of the code (`consumerClusterId` is `consumer.clusterId`,
 * `virtualNodes` is `peerings`; `resources.cpu` stays as it is).
 */
export function schemaPathOf(kind: Kind, path: string): string {
  const [head, ...rest] = path.split(".");
  const from = kind.from[head!];
  if (from === undefined) return path;
  return [from.replace(/\.\*.*$/, ""), ...rest].join(".");
}

/** Whether the schema's input `key` (top-level) is one the code takes under its own name. */
export function passesAsIs(kind: Kind, key: string): boolean {
  return !rootsOf(kind).has(key);
}

/**
 * The schema's inputs from inputs `code` of `kind`'s code, the other way from {@link codeInputsOf}
 * (`consumerClusterId` goes to `consumer.clusterId`), for what an import hands the engine. An
 * input drawn from each element of a list (`*`) cannot be put back and is left out.
 */
export function schemaInputsOf(kind: Kind, code: Properties): Properties {
  const schema: Properties = {};
  for (const [key, value] of Object.entries(code)) {
    const path = (kind.from[key] ?? key).split(".");
    if (value === undefined || path.includes("*")) continue;
    let into = schema;
    for (const part of path.slice(0, -1)) into = (into[part] ??= {}) as Properties;
    into[path[path.length - 1]!] = value;
  }
  return schema;
}
