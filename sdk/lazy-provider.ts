/**
 * Dynamic providers that load their implementation at call time, by package name.
 *
 * Pulumi serializes a dynamic provider object into the state, with everything it captures, and
 * runs that stored copy on refresh and delete. These objects capture only a module path: each
 * method `require`s the installed `pulumi-liqo/provider/resources/<name>` when called, so the
 * state stays small and the package version installed at that time is what runs. (A module
 * captured at import instead would be inlined into the state, and stale code would run.)
 */
import type * as pulumi from "@pulumi/pulumi";

/** Builds the provider object for resource module `name` (e.g. `cluster`). */
export function lazyProvider(name: string): pulumi.dynamic.ResourceProvider {
  const modulePath = `pulumi-liqo/provider/resources/${name}`;
  const impl = (): Required<pulumi.dynamic.ResourceProvider> => require(modulePath).provider;
  return {
    check: (olds, news) => impl().check(olds, news),
    diff: (id, olds, news) => impl().diff(id, olds, news),
    create: (inputs) => impl().create(inputs),
    read: (id, props) => impl().read(id, props),
    update: (id, olds, news) => impl().update(id, olds, news),
    delete: (id, props) => impl().delete(id, props),
  };
}
