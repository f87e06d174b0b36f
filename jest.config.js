// Tests run from TypeScript sources through ts-jest. ESM-only dependencies load through Node's
// require(esm), which Jest supports on Node 24.9+ with --experimental-vm-modules (see package.json).
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: { "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.json" }] },
  // Sources import each other as `./x.js` (Node's ESM-style resolution); Jest resolves the .ts.
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  // Most of a suite's time is waiting (control planes, pulumi, polls), so several files run at once
  // even on two cores; the shared lab is used by one file at a time (harness/labs.ts), labs are
  // planned under a lock (local-cluster/lab.ts). The order: test/sequencer.js. Three workers took
  // the clean-clone run from 24 min 56 s (two) to 21 min 22 s on two cores.
  maxWorkers: 3,
  testSequencer: "<rootDir>/test/sequencer.js",
  globalSetup: "<rootDir>/test/global-setup.js",
  globalTeardown: "<rootDir>/test/global-teardown.js",
  setupFilesAfterEnv: ["<rootDir>/test/setup-after-env.ts"],
  testTimeout: 600000,
};
