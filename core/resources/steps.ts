/**
 * How a resource shim loads its steps: on first need, and with the Kubernetes client from one
 * bundled file.
 *
 * The engine starts a fresh dynamic provider host for every `pulumi` command, and twice for a
 * `refresh` (its preview, then the refresh), so the client's load is paid each time a command
 * reads or changes a cluster. As published, `@kubernetes/client-node` is some 2,700 ES modules:
 * about 0.5 s to load here. `npm run build` bundles it into `dist/vendor/kubernetes-client.cjs`
 * (same code, one CommonJS file: about 0.15 s), and the first step loaded points every later
 * `require("@kubernetes/client-node")` of the process at that file, so one copy of the client
 * serves all modules. Where the bundle is absent (sources run by Jest) nothing is redirected.
 */
import { existsSync } from "node:fs";
import { registerHooks } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** The client's package name, as the steps import it. */
const CLIENT = "@kubernetes/client-node";
/** The bundle `npm run build` writes, beside the compiled sources (this file is dist/core/resources/steps.js). */
const CLIENT_BUNDLE = join(__dirname, "..", "..", "vendor", "kubernetes-client.cjs");

let clientRedirected = false;

/** Points the process's later loads of the client at the bundle, once, if there is one. */
function loadClientFromBundle(): void {
  if (clientRedirected) return;
  clientRedirected = true;
  if (!existsSync(CLIENT_BUNDLE)) return;
  const url = pathToFileURL(CLIENT_BUNDLE).href;
  registerHooks({
    resolve: (specifier, context, next) =>
      specifier === CLIENT ? { url, format: "commonjs", shortCircuit: true } : next(specifier, context),
  });
}

/**
 * Wraps `load` (a `require` of a steps module, written in the shim so that its path resolves
 * there) to run on the first call only, after the client is redirected to its bundle: check and
 * diff, which never call it, load neither the steps nor the client.
 */
export function onFirstNeed<T>(load: () => T): () => T {
  let loaded: { readonly value: T } | undefined;
  return () => {
    if (!loaded) {
      loadClientFromBundle();
      loaded = { value: load() };
    }
    return loaded.value;
  };
}
