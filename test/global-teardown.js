// Removes every lab the test run made: the shared one, and any that a crashed suite left behind.
// Plain JavaScript on the compiled sources (`npm test` builds first): Jest's module mapping does
// not apply to global hooks.
const { downLab, listLabs } = require("../dist/local-cluster/lab.js");
const { TEST_LAB_ROOT } = require("../dist/test/support/labs.js");

module.exports = async function globalTeardown() {
  for (const name of listLabs(TEST_LAB_ROOT)) await downLab(name, TEST_LAB_ROOT);
};
