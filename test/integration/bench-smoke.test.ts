/**
 * The benchmark's smoke run: sections of `npm run bench` once, with their smallest sizes, through
 * its real entry point on the product as users deploy it (agents as pods), so that a change that
 * breaks the entry point, the figures it writes or a section fails here and not on the next
 * person's fresh clone (test/support/bench-section).
 *
 * Cheap on purpose: the sections run on this worker's shared lab (`--shared-lab`; the child process
 * takes it as the suite's files do, so this file never holds it itself), with one round or run
 * each. Three sections: `auth` (the auth service's answers and refusals), `offloading` (a peering,
 * then pods placed and reflected) and `scale` (its smallest size: 3 pods, 1 consumer with a tunnel),
 * and with them the entry point, the lab options and the figures' file that every section shares. `gateway-move` runs on the lab test/integration/pods-across
 * already holds. `tunnel`, `mesh` and `stacks` are left out: what they drive is tested elsewhere
 * (the tunnel tests, the mesh example, every e2e stack), and their smoke runs were most of this
 * file's 408 s on a fast machine (test/durations.json) and of its 1,241 s on a slow hour of
 * 2026-11-28; a break in their own code
 * shows when they run (`npm run bench -- tunnel mesh stacks`). `renewal` cannot run in less than
 * about 11 minutes (its identity lives the CSR API's minimum of 600 s).
 */
import { clusterOf } from "../../local-cluster/lab.js";
import { uninstallClusters } from "../../harness/install.js";
import { releaseSharedLab, sharedLab } from "../../harness/labs.js";
import { expectBenchSectionFigures } from "../support/bench-section.js";

/** Each section, and the deadline of its run (its installs, pulumi runs and clean-up, on a busy machine). */
const SECTIONS = [
  // The first section run may start the shared lab (about 2 minutes on a loaded machine).
  { section: "auth", deadlineMs: 6 * 60_000 },
  { section: "offloading", deadlineMs: 10 * 60_000 },
  // 3 pods on one virtual node, then 1 consumer of one provider: both on the shared lab's a and b.
  { section: "scale", deadlineMs: 12 * 60_000 },
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
