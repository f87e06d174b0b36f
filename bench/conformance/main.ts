/**
 * `npm run conformance`: issue 23's yardstick. Upstream's conformance specs of the selection
 * (suite.ts) run twice, side by side: on a plain local cluster and on a consumer whose every test
 * pod runs on a provider through the virtual node (passes.ts); each spec's result on both, the virtual node's
 * failures with their reasons and the ratio are printed, and written as text and JSON. Not a test:
 * it asserts nothing; it measures.
 *
 * Usage: node dist/bench/conformance/main.js [--only baseline|virtual] [--focus REGEX] [--out DIR]
 * `--focus`: only the selected specs whose name REGEX matches (a first run on a few specs).
 * `--only`: one pass (the table then shows the other as absent).
 * Needs $LIQO_E2E_BIN_DIR (scripts/lib.sh) holding e2e.test and agnhost: `scripts/toolchain.sh conformance`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { downLab, listLabs } from "../../local-cluster/lab.js";
import { commandPath } from "../../local-cluster/commands.js";
import { labOwner, TEST_LAB_ROOT } from "../../harness/labs.js";
import { machine } from "../figures.js";
import { suiteImages } from "./images.js";
import type { SpecResult } from "./junit.js";
import { baselinePass, PASSES, virtualPass, type Pass } from "./passes.js";
import { focusOn, REFUSED_BY_DESIGN, runSuite, selectedSpecs, SELECTION, stopSuite } from "./suite.js";
import { compare, formatComparison } from "./table.js";

/** What the command line asked for. */
interface Options {
  readonly passes: readonly Pass[];
  /** Narrows the selection to the specs this matches. */
  readonly focus?: RegExp;
  /** Where the reports, logs, table and JSON go. */
  readonly out: string;
}

const USAGE = "usage: npm run conformance -- [--only baseline|virtual] [--focus REGEX] [--out DIR]";

/** Reads the command line; a wrong argument ends the run with the usage. */
function parseOptions(args: readonly string[]): Options {
  let passes: readonly Pass[] = PASSES;
  let focus: RegExp | undefined;
  let out = join(".bench-output", `conformance-${new Date().toISOString().replace(/[:.]/g, "-")}`);
  for (let i = 0; i < args.length; i++) {
    const [arg, value] = [args[i]!, args[i + 1]];
    if (arg === "--only" && (PASSES as readonly string[]).includes(value ?? "")) passes = [value as Pass];
    else if (arg === "--focus" && value) focus = new RegExp(value);
    else if (arg === "--out" && value) out = value;
    else throw new Error(`${arg}: not understood, or its value is missing or wrong\n${USAGE}`);
    i++;
  }
  // Absolute: e2e.test runs in its report directory and takes --report-dir from there.
  return { passes, ...(focus ? { focus } : {}), out: resolve(out) };
}

/** Where the toolchain put e2e.test and agnhost. */
function e2eBinDir(): string {
  const dir = process.env["LIQO_E2E_BIN_DIR"];
  if (!dir)
    throw new Error("conformance: LIQO_E2E_BIN_DIR is not set; run scripts/conformance.sh (npm run conformance)");
  return dir;
}

/** Removes the labs this run made (an interrupted run's). */
async function removeOwnLabs(): Promise<void> {
  for (const lab of listLabs(TEST_LAB_ROOT)) if (labOwner(lab) === process.pid) await downLab(lab, TEST_LAB_ROOT);
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: stopping the suite and removing this run's labs…`);
      stopSuite();
      void removeOwnLabs().finally(() => process.exit(130));
    });
  }
  const log = (line: string): void => console.error(`[conformance] ${line}`);
  const bin = e2eBinDir();
  const e2eTest = join(bin, "e2e.test");
  const kubectl = commandPath("kubectl");
  const out = options.out;
  mkdirSync(out, { recursive: true });

  // The specs, from a dry run: the selection, or those of it --focus names.
  const selected = await selectedSpecs({ e2eTest, kubectl, reportDir: join(out, "selection") });
  const specs = options.focus ? selected.filter((name) => options.focus!.test(name)) : selected;
  if (specs.length === 0)
    throw new Error(`conformance: --focus ${options.focus} matches none of the ${selected.length} selected specs`);
  const focus = options.focus ? focusOn(specs) : SELECTION.focus;
  log(
    `${specs.length} spec(s) of the ${selected.length} selected; passes: ${options.passes.join(", ")}; output in ${out}`,
  );

  const images = await suiteImages(bin, log);
  const results: Partial<Record<Pass, SpecResult[]>> = {};
  const seconds: Partial<Record<Pass, number>> = {};
  const failures: string[] = [];
  // Side by side: each pass spends most of its time waiting on pods and polls, and each has its
  // own lab; one after the other, the whole selection would take twice as long.
  await Promise.all(
    options.passes.map(async (pass) => {
      const started = Date.now();
      const inputs = {
        images,
        log,
        runSuite: (p: Pass, kubeconfig: string) =>
          runSuite({ e2eTest, kubectl, kubeconfig, focus, reportDir: join(out, p) }),
      };
      try {
        results[pass] = await (pass === "baseline" ? baselinePass(inputs) : virtualPass(inputs));
      } catch (error) {
        failures.push(`${pass}: ${(error as Error).message}`);
        log(`${pass}: failed: ${(error as Error).message}`);
      }
      seconds[pass] = Math.round((Date.now() - started) / 1000);
      log(`${pass}: done in ${seconds[pass]} s`);
    }),
  );

  const comparison = compare(results.baseline ?? [], results.virtual ?? [], specs);
  const leftOut = Object.entries(REFUSED_BY_DESIGN).map(([name, why]) => `- ${name}: ${why}`);
  const table = `${formatComparison(comparison)}\n\nleft out, refused by a provider by design:\n${leftOut.join("\n")}`;
  const host = machine();
  const header =
    `upstream conformance (e2e.test ${process.env["KUBERNETES_VERSION"] ?? ""}), ${specs.length} spec(s); ` +
    `machine: ${host.cpu}, ${host.cores} cores, ${host.memoryGiB} GiB; ` +
    `seconds: ${options.passes.map((p) => `${p} ${seconds[p] ?? "-"}`).join(", ")}`;
  console.log(`\n${header}\n${table}`);
  writeFileSync(join(out, "table.txt"), `${header}\n${table}\n`);
  writeFileSync(
    join(out, "conformance.json"),
    `${JSON.stringify({ date: new Date().toISOString(), machine: host, specs, seconds, failures, comparison }, null, 2)}\n`,
  );
  console.log(`\ntable: ${join(out, "table.txt")}; JSON: ${join(out, "conformance.json")}`);
  if (failures.length > 0) throw new Error(`a pass could not run: ${failures.join("; ")}`);
}

main().catch((error: unknown) => {
  console.error(`conformance: ${(error as Error).message}`);
  void removeOwnLabs().finally(() => process.exit(1));
});
