/**
 * `npm run matrix`: the compatibility matrix. One scenario (scenario.ts: the README's program with
 * label-selected offloading, an unmodified two-tier app calling across both ways, destroy with the
 * app running) on each combination of consumer release × provider release × kube-proxy mode × CNI,
 * one lab at a time; prints the table and writes it, with the figures as JSON, under .bench-output/.
 * Not a test: it asserts nothing; it reports.
 *
 * Usage: node dist/bench/matrix/main.js [--combination b=1.35,a=1.37[,kube-proxy=nftables][,cni=flannel]]... [--every-mode] [--out DIR]
 * Without `--combination`: every pair of the supported releases (labReleases), the kube-proxy
 * modes and the CNIs taking turns; `--every-mode` runs each pair in every mode and CNI.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CNIS, KUBE_PROXY_MODES, type CniKind, type KubeProxyMode } from "../../local-cluster/plan.js";
import { labReleases, minorsOf, patchReleaseOf } from "../../local-cluster/releases.js";
import { machine } from "../figures.js";
import { runCombination, type Combination, type Outcome } from "./scenario.js";
import { combinations, describeCombination, formatMatrix } from "./table.js";

const USAGE =
  "usage: npm run matrix -- [--combination b=1.35,a=1.37[,kube-proxy=nftables][,cni=flannel]]... [--every-mode] [--out DIR]";

/** `b=1.35,a=1.37,kube-proxy=nftables,cni=flannel` as a combination; each release checked against the supported ones. */
function parseCombination(text: string, releases: readonly string[]): Combination {
  const fields = new Map(text.split(",").map((field) => field.split("=") as [string, string]));
  const consumer = fields.get("b");
  const provider = fields.get("a");
  const kubeProxy = (fields.get("kube-proxy") ?? "iptables") as KubeProxyMode;
  const cni = (fields.get("cni") ?? "bridge") as CniKind;
  if (!consumer || !provider || !KUBE_PROXY_MODES.includes(kubeProxy) || !CNIS.includes(cni))
    throw new Error(
      `--combination ${text}: expected b=MINOR,a=MINOR[,kube-proxy=${KUBE_PROXY_MODES.join("|")}][,cni=${CNIS.join("|")}]`,
    );
  patchReleaseOf(consumer, releases);
  patchReleaseOf(provider, releases);
  return { consumer, provider, kubeProxy, cni };
}

/** Reads the command line; a wrong argument ends the run with the usage. */
function parseOptions(args: readonly string[]): { combinations: Combination[]; out: string } {
  const releases = labReleases();
  const asked: Combination[] = [];
  let everyMode = false;
  let out = join(".bench-output", `matrix-${new Date().toISOString().replace(/[:.]/g, "-")}`);
  for (let i = 0; i < args.length; i++) {
    const [arg, value] = [args[i]!, args[i + 1]];
    if (arg === "--every-mode") {
      everyMode = true;
      continue;
    }
    if (arg === "--combination" && value) asked.push(parseCombination(value, releases));
    else if (arg === "--out" && value) out = value;
    else throw new Error(`${arg}: not understood, or its value is missing\n${USAGE}`);
    i++;
  }
  return {
    combinations: asked.length > 0 ? asked : combinations(minorsOf(releases), KUBE_PROXY_MODES, CNIS, everyMode),
    out,
  };
}

async function main(): Promise<void> {
  const { combinations: planned, out } = parseOptions(process.argv.slice(2));
  mkdirSync(out, { recursive: true });
  const started = new Date();
  const host = machine();
  console.log(`matrix: ${planned.length} combination(s), one lab at a time, on ${host.cores} cores (${host.cpu})`);
  const outcomes: Outcome[] = [];
  for (const combination of planned) {
    console.log(`matrix: ${describeCombination(combination)} ...`);
    const outcome = await runCombination(combination);
    outcomes.push(outcome);
    console.log(
      `matrix: ${describeCombination(combination)}: ${outcome.passed ? "passed" : `FAILED at ${outcome.failed?.step}`} in ${Math.round(outcome.seconds)} s`,
    );
    writeFileSync(
      join(out, "matrix.json"),
      JSON.stringify({ started: started.toISOString(), machine: host, outcomes }, null, 2),
    );
  }
  const table = formatMatrix(outcomes);
  writeFileSync(join(out, "matrix.md"), `${table}\n`);
  console.log(`\n${table}\n\nmatrix: ${started.toISOString().slice(0, 10)}, \`npm run matrix\`; written to ${out}`);
  if (outcomes.some((o) => !o.passed)) process.exitCode = 1;
}

main().catch((error: Error) => {
  console.error(`matrix: ${error.message}`);
  process.exit(2);
});
