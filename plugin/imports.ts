/**
 * `pulumi import` through the plugin: the engine asks to read a resource by an ID the user typed,
 * with no inputs and no state, so no kubeconfig. The ID therefore says how to reach the cluster
 * without holding a secret: `<object>@<kubeconfig file>`, the object as the resource's own ID
 * names it (a Cluster's cluster ID) and the absolute path of a kubeconfig file on the machine
 * that runs pulumi. The file's text reaches the cluster; the path is never stored (the state's ID
 * is the object's). Parsing is pure; reading the file is the one I/O here.
 */
import { readFileSync } from "node:fs";
import { isAbsolute } from "node:path";

/** An import ID, parsed. */
export interface ImportId {
  /** What the resource's own ID names (a Cluster: its cluster ID). */
  readonly object: string;
  /** The absolute path of the kubeconfig file that reaches the cluster holding it. */
  readonly kubeconfigPath: string;
}

/** How errors name an import: `Cluster import of ID "…"`. */
export const importLabel = (kind: string, id: string): string => `${kind} import of ID ${JSON.stringify(id)}`;

/**
 * Parses import ID `id` of resource `kind`, whose object part has the form `object` (for the
 * message, e.g. `<clusterId>`); an error naming the ID and the form expected when it is malformed.
 * The object part is a lowercase DNS-label-like word: it never reaches a path or a URL as typed.
 */
export function parseImportId(kind: string, id: string, object: string): ImportId {
  const at = id.indexOf("@");
  const expected = `expected ${object}@<absolute path of a kubeconfig file that reaches the cluster>`;
  const fail = (why: string) => new Error(`${importLabel(kind, id)}: parsing the ID: ${why}; ${expected}`);
  if (at < 0) throw fail("it has no @");
  const part = id.slice(0, at);
  const kubeconfigPath = id.slice(at + 1);
  if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(part))
    throw fail(`${JSON.stringify(part)} is not ${object} (lowercase letters, digits and dashes)`);
  if (!isAbsolute(kubeconfigPath) || kubeconfigPath.includes("\0"))
    throw fail(`${JSON.stringify(kubeconfigPath)} is not an absolute path`);
  return { object: part, kubeconfigPath };
}

/** The text of the kubeconfig file of `parsed`; an error naming the file (never its text) when it cannot be read. */
export function readKubeconfigFile(label: string, parsed: ImportId): string {
  try {
    return readFileSync(parsed.kubeconfigPath, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw new Error(`${label}: reading the kubeconfig file ${parsed.kubeconfigPath}: ${code}`, { cause: error });
  }
}
