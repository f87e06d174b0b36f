/**
 * Kubeconfig text read as text: parsed and judged as `@kubernetes/client-node` would take it, but
 * without loading that library (about 0.4 s and 80 MB), so that what needs no cluster (a resource's
 * `check` and `diff`) stays light. Pure: no I/O. `loadKubeconfig` (client.ts) runs this first, so a
 * kubeconfig is judged in one place.
 */
import { load } from "js-yaml";

/** A kubeconfig that could not be used; the message names which input it came from, never its text. */
export class KubeconfigError extends Error {
  /** Brand for checks across copies of this module (no `instanceof`). */
  readonly isKubeconfigError = true;
  /** What is wrong, without the input's name: `not a usable kubeconfig: …`. */
  readonly reason: string;
  constructor(
    readonly input: string,
    problem: string,
  ) {
    super(`${input}: not a usable kubeconfig: ${problem}`);
    this.reason = `not a usable kubeconfig: ${problem}`;
    this.name = "KubeconfigError";
  }
}

/** What a kubeconfig's text says about the cluster its current context points at. */
export interface KubeconfigFacts {
  /** The API server URL, without a trailing `/` (as client-node reads it). */
  readonly server: string;
}

/** Why a kubeconfig's structure is refused; the YAML parser's own reasons are cut in {@link parseProblem}. */
const NOT_A_KUBECONFIG = "it does not read as a kubeconfig (clusters, contexts and users, each with a name)";

/**
 * Why kubeconfig text did not parse, without a word of the text: the YAML parser's message quotes
 * the lines around the fault (a key's `client-key-data`, say) and some of its reasons quote a
 * tag or an alias, so only where it is (line, column) and the reason cut before any quote is kept.
 */
export function parseProblem(error: unknown): string {
  const { reason, mark } = error as { reason?: unknown; mark?: { line?: unknown; column?: unknown } };
  const at =
    typeof mark?.line === "number" && typeof mark.column === "number"
      ? ` at line ${mark.line + 1}, column ${mark.column + 1}`
      : "";
  const why = typeof reason === "string" ? reason.split(/["'!*&:\n]/)[0]!.trim() : "";
  return at ? `it is not valid YAML${at}${why ? ` (${why})` : ""}` : NOT_A_KUBECONFIG;
}

type Entry = Record<string, unknown>;

/** The entries of list `key` of `document`; client-node refuses an entry without a name (or without `required`). */
function entriesOf(document: Entry, key: string, required: readonly string[]): Entry[] | undefined {
  const list = document[key];
  if (!Array.isArray(list)) return [];
  const entries = list.map((entry): Entry => (entry !== null && typeof entry === "object" ? (entry as Entry) : {}));
  const complete = entries.every((entry) =>
    ["name", ...required].every((path) => {
      const value = path.split(".").reduce<unknown>((at, part) => (at as Entry | undefined)?.[part], entry);
      return value !== undefined && value !== null && value !== "";
    }),
  );
  return complete ? entries : undefined;
}

const named = (entries: readonly Entry[], name: unknown): Entry | undefined =>
  entries.find((entry) => entry["name"] === name);

/**
 * Reads kubeconfig text; `input` names where it came from (e.g. `Cluster "a": kubeconfig`) so the
 * error says which property to fix. Requires a current context with a cluster and a user, and a
 * server that is a URL.
 */
export function readKubeconfig(text: unknown, input: string): KubeconfigFacts {
  if (typeof text !== "string" || text.trim() === "") throw new KubeconfigError(input, "it is empty");
  let document: unknown;
  try {
    document = load(text);
  } catch (error) {
    throw new KubeconfigError(input, parseProblem(error));
  }
  if (document === null || typeof document !== "object") throw new KubeconfigError(input, NOT_A_KUBECONFIG);
  const config = document as Entry;
  const clusters = entriesOf(config, "clusters", ["cluster.server"]);
  const contexts = entriesOf(config, "contexts", ["context.cluster"]);
  const users = entriesOf(config, "users", []);
  if (!clusters || !contexts || !users) throw new KubeconfigError(input, NOT_A_KUBECONFIG);
  const context = named(contexts, config["current-context"])?.["context"] as Entry | undefined;
  const cluster = context && (named(clusters, context["cluster"])?.["cluster"] as Entry | undefined);
  if (!cluster) throw new KubeconfigError(input, "its current context names no cluster");
  if (!named(users, context["user"])) throw new KubeconfigError(input, "its current context names no user");
  const server = String(cluster["server"]).replace(/\/$/, "");
  try {
    new URL(server);
  } catch {
    throw new KubeconfigError(input, "the server of its current cluster is not a URL");
  }
  return { server };
}

/** The API server URL of kubeconfig text, or undefined when the text is not a usable kubeconfig. */
export function serverOfText(text: unknown): string | undefined {
  try {
    return readKubeconfig(text, "kubeconfig").server;
  } catch {
    return undefined;
  }
}
