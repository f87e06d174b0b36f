// Names this test run, so that its labs are told apart from those of a run going on beside it
// (another developer's, on the same machine): see harness/labs.ts.
module.exports = async function globalSetup() {
  process.env.LIQO_TEST_RUN = String(process.pid);
};
