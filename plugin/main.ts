/**
 * The provider plugin's process, `pulumi-resource-liqo`: the engine starts it with its own gRPC
 * address as last argument (after flags such as `--logtostderr` and `-v=N`), reads the port it
 * serves on from the first line of its stdout, and then talks gRPC. The plugin's stdout and
 * stderr are hidden from users: what it has to say goes to the engine (engine-log.ts).
 */
import { format } from "node:util";
import { exitWithEngine, reportToEngine } from "../core/resources/engine-log.js";
import { schemaText } from "./schema.js";
import { serve } from "./server.js";

// Only the port may reach stdout: anything printed before it would be read as the port.
console.log = console.info = (...args: unknown[]) => void process.stderr.write(`${format(...args)}\n`);

const engine = process.argv
  .slice(2)
  .filter((arg) => !arg.startsWith("-"))
  .at(-1);
if (engine && /^[^\s:]+:\d+$/.test(engine)) reportToEngine(engine);
exitWithEngine("the liqo provider plugin");

serve(schemaText()).then(
  ({ port }) => process.stdout.write(`${port}\n`),
  (error: unknown) => {
    process.stderr.write(`pulumi-resource-liqo: could not serve: ${(error as Error).message}\n`);
    process.exit(1);
  },
);
