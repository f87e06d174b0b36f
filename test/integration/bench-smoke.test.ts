/**
 * The benchmark's smoke run: each section of `npm run bench` once, with its smallest sizes, through
 * its real entry point on the product as users deploy it (agents as pods), so that a change that
 * breaks a section fails here and not on the next person's fresh clone (test/support/bench-section).
 *
 * Cheap on purpose: the sections that need clusters a and b run on this worker's shared lab
 * (`--shared-lab`; the child process takes it as the suite's files do, so this file never holds it
 * itself), with one round or run each and one-second transfers. `gateway-move`, which needs two
 * nodes per cluster and one pod CIDR, runs on the lab test/integration/pods-across already holds of
 * that shape, rather than on a lab of its own. `renewal` is left out: its identity lives the CSR
 * API's minimum of 600 s, so it cannot run in less than about 11 minutes.
 */
import { clusterOf } from "../../local-cluster/lab.js";
import { uninstallClusters } from "../../harness/install.js";
import { releaseSharedLab, sharedLab } from "../../harness/labs.js";
import { expectBenchSectionFigures } from "../support/bench-section.js";

/** Each section, and the deadline of its run (its installs, pulumi runs and clean-up, on a busy machine). */
const SECTIONS = [
  // The first section run may start the shared lab (about 2 minutes on a loaded machine).
  { section: "auth", deadlineMs: 6 * 60_000 },
  { section: "tunnel", deadlineMs: 10 * 60_000 },
  { section: "offloading", deadlineMs: 10 * 60_000 },
  { section: "mesh", deadlineMs: 10 * 60_000 },
  // Three stacks' up and destroy: past 15 minutes in three runs of 2026-11-27/28 whose every file took three times its usual time.
  { section: "stacks", deadlineMs: 25 * 60_000 },
] as const;

describe("npm run bench, smoke run (smallest sizes, figures produced)", () => {
  for (const { section, deadlineMs } of SECTIONS) {
    test(
      `GIVEN the shared lab WHEN \`bench ${section}\` runs with its smallest sizes THEN it prints and writes its figures ` +
        `(within ${deadlineMs / 60_000} min)`,
      async () => {
        try {
          await expectBenchSectionFigures(section, ["--shared-lab"], deadlineMs);
        } catch (error) {
          // A section that failed half-way may leave its installs on the shared lab: the next files need it clean.
          const lab = await sharedLab();
          await uninstallClusters([clusterOf(lab, "a"), clusterOf(lab, "b")], { keepDefinitions: true });
          await releaseSharedLab();
          throw error;
        }
      },
      deadlineMs + 5 * 60_000,
    );
  }
});
