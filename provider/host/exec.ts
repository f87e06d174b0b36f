/** Runs host tools (`ip`, `iptables`, `wg`), in the host namespace or a cluster's, with errors that quote the command. */
import { execa } from "execa";

/** A host command that failed; the message holds the command line and what it printed. */
export class CommandError extends Error {
  /** Brand for checks across copies of this module (no `instanceof`). */
  readonly isCommandError = true;
  constructor(readonly command: string, readonly stderr: string, readonly exitCode: number | undefined) {
    super(`\`${command}\` failed (exit ${exitCode ?? "?"}): ${stderr.trim() || "no output"}`);
    this.name = "CommandError";
  }
}

/** Runs `file args…` and returns its stdout; throws {@link CommandError} on a non-zero exit. */
export async function run(file: string, args: readonly string[]): Promise<string> {
  const result = await execa(file, args, { reject: false, stdin: "ignore" });
  if (result.exitCode !== 0 || result.failed) {
    throw new CommandError([file, ...args].join(" "), String(result.stderr || result.message || ""), result.exitCode);
  }
  return String(result.stdout);
}

/** Runs a command inside network namespace `netns`. */
export function runIn(netns: string, file: string, args: readonly string[]): Promise<string> {
  return run("ip", ["netns", "exec", netns, file, ...args]);
}
