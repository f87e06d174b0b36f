/**
 * The supervisor process of one local cluster (see supervisor.ts), started by `up` in the
 * cluster's namespace:
 *
 *   node dist/local-cluster/supervise.js --lab-dir DIR --cluster NAME
 */
import { parseArgs } from "node:util";
import { consoleReporter } from "../agent/reporter.js";
import { API_SERVER_PORT } from "./plan.js";
import { supervise } from "./supervisor.js";

const { values } = parseArgs({ options: { "lab-dir": { type: "string" }, cluster: { type: "string" } } });
if (!values["lab-dir"] || !values.cluster) {
  consoleReporter.warn("supervise: expected --lab-dir DIR --cluster NAME");
  process.exit(2);
}
const stop = new AbortController();
for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => stop.abort());
supervise({
  labDir: values["lab-dir"],
  cluster: values.cluster,
  signal: stop.signal,
  reporter: consoleReporter,
  apiServerPort: API_SERVER_PORT,
}).catch((error: Error) => {
  consoleReporter.warn(`supervisor of cluster ${values.cluster}: ${error.message}`);
  process.exit(1);
});
