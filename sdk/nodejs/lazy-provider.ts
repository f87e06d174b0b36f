/**
 * Dynamic providers that load their implementation at call time, by package name.
 *
 * Pulumi serializes a dynamic provider object into the state, with everything it captures, and
 * runs that stored copy on refresh and delete. These objects capture only a module path: each
 * method `require`s the installed `pulumi-liqo/core/resources/<name>` when called, so the
 * state stays small and the package version installed at that time is what runs. (A module
 * captured at import instead would be inlined into the state, and stale code would run.) That
 * module is light (it loads the Kubernetes client only once a call needs a cluster), so a
 * no-change preview, which only checks and diffs, pays little for it.
 */
import type * as pulumi from "@pulumi/pulumi";

/**
 * One provider object per resource module: the SDK serializes a provider once per object (tens
 * to hundreds of milliseconds each, through the inspector), so every resource of a kind after the
 * first reuses the first one's text. The text is the same either way: nothing in the state moves.
 */
const providers = new Map<string, pulumi.dynamic.ResourceProvider>();

/** Builds the provider object for resource module `name` (e.g. `cluster`), or hands back the one built before. */
export function lazyProvider(name: string): pulumi.dynamic.ResourceProvider {
  const known = providers.get(name);
  if (known) return known;
  const modulePath = `pulumi-liqo/core/resources/${name}`;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- by package name, at call time: see above
  const impl = (): Required<pulumi.dynamic.ResourceProvider> => require(modulePath).pulumiProvider;
  const provider: pulumi.dynamic.ResourceProvider = {
    check: (olds, news) => impl().check(olds, news),
    diff: (id, olds, news) => impl().diff(id, olds, news),
    create: (inputs) => impl().create(inputs),
    read: (id, props) => impl().read(id, props),
    update: (id, olds, news) => impl().update(id, olds, news),
    delete: (id, props) => impl().delete(id, props),
  };
  providers.set(name, provider);
  return provider;
}
