/**
 * A resource's diff as a table of rules, one per input its diff looks at: whether a change of it
 * replaces the resource or updates it in place, why, and (where comparing the top-level input
 * would be wrong) how a change is found. The same table drives the diff and what a preview says
 * about it, so the two cannot drift apart. Pure: no I/O.
 */
import type { ResourceDeclaration } from "../../declarations/index.js";
import { changeEffectsOf } from "../../declarations/derived.js";
import { URN_INPUT } from "./hidden-inputs.js";
import { changedProperties, isUnknown } from "./inputs.js";

/** What a change of one input does to the resource. */
export type ChangeEffect = "replaces" | "updates in place";

/** How one input's change is found, what it does, and why. */
export interface DiffRule<Olds, News> {
  /** Whether the resource is replaced when this input changes, or updated in place. */
  readonly effect: ChangeEffect;
  /**
   * Why, as the clause a preview prints after the effect: what the resource's provider does, or
   * what holds the resource to its old value. Never a value: previews show it to everyone.
   */
  readonly reason: string;
  /**
   * Whether it changed, when that is not "the top-level input of the rule's name differs" (a
   * nested input, a default that resolves to what the outputs hold, state recorded by refresh).
   */
  readonly changed?: (olds: Olds, news: News) => boolean;
}

/** How the code finds one change, where "the top-level input of the rule's name differs" is wrong. */
export type ChangeTest<Olds, News> = (olds: Olds, news: News) => boolean;

/**
 * The test of the `status` that `pulumi refresh` recorded: anything but `healthy` (the one healthy
 * status, or a test of it) is drift, which the next `pulumi up` repairs through update (the
 * declaration's `repairedByUpdate` says why).
 */
export function isDrift(
  healthy: string | ((status: string) => boolean),
): ChangeTest<{ readonly status?: string }, object> {
  const isHealthy = typeof healthy === "string" ? (status: string) => status === healthy : healthy;
  return (olds) => olds.status !== undefined && !isHealthy(olds.status);
}

/**
 * A resource's rules: each change its declaration tells apart, with what it does and why, and the
 * code's own test where `tests` gives one. A test of a change the declaration does not know is a
 * mistake in the code, refused at load.
 */
export function declaredRules<Olds, News>(
  declaration: ResourceDeclaration,
  tests: Readonly<Record<string, ChangeTest<Olds, News>>> = {},
): DiffRules<Olds, News> {
  const effects = changeEffectsOf(declaration);
  const unknown = Object.keys(tests).filter((key) => !(key in effects));
  if (unknown.length > 0)
    throw new Error(`${declaration.name}'s diff tests ${unknown.join(", ")}, which its declaration lacks`);
  return Object.fromEntries(
    Object.entries(effects).map(([key, effect]) => [key, tests[key] ? { ...effect, changed: tests[key] } : effect]),
  );
}

/** A resource's rules, by the name a preview gives the input. */
export type DiffRules<Olds, News, Key extends string = string> = { readonly [K in Key]: DiffRule<Olds, News> };

/** What a diff found. */
export interface FoundChanges<Key extends string = string> {
  /** Every input that changed, in the rules' order. */
  readonly changed: readonly Key[];
  /** Those of them that replace the resource. */
  readonly replaces: readonly Key[];
  /** Those of them whose new value is not known yet (another resource's output, in preview). */
  readonly unknown: readonly Key[];
}

const byName = (value: unknown): Record<string, unknown> => (value ?? {}) as Record<string, unknown>;

/**
 * A rule's `changed` that compares the top-level input `key`; with `unknownIsUnchanged`, a value
 * not known yet counts as unchanged (see {@link changedProperties}).
 */
export function inputChanged(
  key: string,
  options: { readonly unknownIsUnchanged?: boolean } = {},
): (olds: object, news: object) => boolean {
  return (olds, news) => changedProperties(byName(olds), byName(news), [key], options).length > 0;
}

/** Whether the value at dotted path `key` of `news` (or a value on the way to it) is not known yet. */
function unknownAt(news: object, key: string): boolean {
  let value: unknown = news;
  for (const part of key.split(".")) {
    if (isUnknown(value)) return true;
    value = byName(value)[part];
  }
  return isUnknown(value);
}

/**
 * Applies `rules` to a resource's old outputs and new inputs. A rule without its own `changed`
 * compares the top-level input of its name, with `options` (see {@link inputChanged}).
 */
export function changesOf<Olds extends object, News extends object, Key extends string>(
  rules: DiffRules<Olds, News, Key>,
  olds: Olds,
  news: News,
  options: { readonly unknownIsUnchanged?: boolean } = {},
): FoundChanges<Key> {
  const changed = (Object.keys(rules) as Key[]).filter((key) => {
    const rule: DiffRule<Olds, News> = rules[key];
    return (rule.changed ?? inputChanged(key, options))(olds, news);
  });
  return {
    changed,
    replaces: changed.filter((key) => rules[key].effect === "replaces"),
    unknown: changed.filter((key) => unknownAt(news, key)),
  };
}

/** What {@link explainChanges} explains. */
export interface ChangesToExplain {
  /** The resource's type, e.g. `Tunnel`. */
  readonly kind: string;
  /** Which resource: its name, or its id when the name is not known. */
  readonly label: string;
  /** The inputs that changed. */
  readonly changed: readonly string[];
  /** Those of them that replace the resource. */
  readonly replaces: readonly string[];
  /** Those of them whose new value is not known yet. @default [] */
  readonly unknown?: readonly string[];
  /** Whether a replacement deletes the old resource before it creates the new one. */
  readonly deleteBeforeReplace: boolean;
  /** Why each input's change does what it does. */
  readonly reasons: Readonly<Record<string, { readonly reason: string }>>;
}

/**
 * Whether an update only records its inputs: turning `force` on or off, alone or with `drift` (what
 * a refresh recorded, e.g. a provider gone). Setting force is the way out when a cluster is gone,
 * so such an update contacts no cluster. Pure.
 */
export function recordsOnly(changes: { readonly changed: readonly string[] }, drift: readonly string[] = []): boolean {
  return changes.changed.includes("force") && changes.changed.every((key) => key === "force" || drift.includes(key));
}

/**
 * One line per changed input, replacing ones first: what the change does to the resource and why,
 * e.g. `Tunnel "b-to-a": port changes → updates in place: …`. Names inputs, never their values.
 */
export function explainChanges(changes: ChangesToExplain): string[] {
  const replaced = changes.replaces.length > 0;
  const replacement = changes.deleteBeforeReplace ? "delete, then create" : "create, then delete";
  const line = (key: string): string => {
    const unknown = changes.unknown?.includes(key) ?? false;
    const what = unknown ? `${key} is not known yet (it comes from a resource that changes first)` : `${key} changes`;
    const effect = changes.replaces.includes(key)
      ? `${unknown ? "replaces if it differs" : "replaces"} (${replacement})`
      : replaced
        ? "taken along by the replacement; alone it would update in place"
        : unknown
          ? "updates in place if it differs"
          : "updates in place";
    const reason = changes.reasons[key]?.reason;
    return `${changes.kind} "${changes.label}": ${what} → ${effect}${reason ? `: ${reason}` : ""}`;
  };
  const others = changes.changed.filter((key) => !changes.replaces.includes(key));
  return [...changes.replaces, ...others].map(line);
}

/** The resource's URN as the SDK passed it, or "" (state written before it did, or a test). */
export function urnOf(news: object): string {
  const urn = (news as Record<string, unknown>)[URN_INPUT];
  return typeof urn === "string" && !isUnknown(urn) ? urn : "";
}

/** The resource's name (the last part of its URN), or `id` when the URN is not known. */
export function labelOf(news: object, id: string): string {
  const urn = urnOf(news);
  return urn ? urn.slice(urn.lastIndexOf("::") + 2) : id;
}
