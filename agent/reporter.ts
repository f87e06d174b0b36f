/** The agent's log lines: one small interface, so that tests can capture what it says. */

/** Receives the agent's progress and warnings. Never given secrets. */
export interface Reporter {
  info(line: string): void;
  warn(line: string): void;
}

/** Writes timestamped lines to stdout (info) and stderr (warnings). */
export const consoleReporter: Reporter = {
  info: (line) => void process.stdout.write(`${new Date().toISOString()} ${line}\n`),
  warn: (line) => void process.stderr.write(`${new Date().toISOString()} warning: ${line}\n`),
};
