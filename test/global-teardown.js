// Removes the labs of this test run, and those of runs that are no longer alive (crashed), but
// never the labs of a run still going on beside this one. Plain JavaScript on the compiled
// sources (`npm test` builds first): Jest's module mapping does not apply to global hooks.
const { downLab, listLabs } = require("../dist/local-cluster/lab.js");
const { TEST_LAB_ROOT, labOwner, forgetLab } = require("../dist/harness/labs.js");

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

module.exports = async function globalTeardown() {
  const ours = listLabs(TEST_LAB_ROOT).filter((name) => {
    const owner = labOwner(name);
    return owner === undefined || owner === Number(process.env.LIQO_TEST_RUN) || !alive(owner);
  });
  // The workers' shared labs share nothing (namespaces, links and directories are per lab): all go
  // down at once, not one after another at the end of every run.
  const downs = await Promise.allSettled(
    ours.map(async (name) => {
      await downLab(name, TEST_LAB_ROOT);
      // Every worker of the run has exited: nobody waits on these any more.
      forgetLab(name);
    }),
  );
  const failed = downs.find((d) => d.status === "rejected");
  if (failed) throw failed.reason;
};
