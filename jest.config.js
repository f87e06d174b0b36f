// Tests run from TypeScript sources through ts-jest. ESM-only dependencies load through Node's
// require(esm), which Jest supports on Node 24.9+ with --experimental-vm-modules (see package.json).
const { availableParallelism, totalmem } = require("node:os");

/**
 * Workers from the machine, not a fixed number: one per core, at most 2, and one per 6 GiB of
 * memory (a worker's shared lab, a private lab and a pulumi run take about that at their peak).
 * Three workers ran the suite fastest when the machine was fast (24 min on 2 cores, docs/
 * performance.md), but every lab a worker holds idles on timers (leases, status, resyncs) whose
 * cost is per second, not per test: when the same machine ran three to four times slower, the
 * third worker's clusters took the CPU the other files needed, and runs went from 24 to over 90
 * minutes. Two bound the worst hour at the price of the best one. LIQO_TEST_WORKERS overrides it.
 */
const workers =
  Number(process.env.LIQO_TEST_WORKERS) ||
  Math.max(1, Math.min(2, availableParallelism(), Math.floor(totalmem() / 6 / 2 ** 30)));

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: { "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.json" }] },
  // Sources import each other as `./x.js` (Node's ESM-style resolution); Jest resolves the .ts. The
  // Kubernetes client comes from the one-file bundle `npm run build` makes (as the dynamic providers
  // load it): Jest loads a file's modules anew for every test file, and the package's hundreds of
  // modules cost every file about 0.25 s of CPU more (the unit tests: 56 s of CPU, 35 s with it).
  moduleNameMapper: {
    "^@kubernetes/client-node$": "<rootDir>/dist/vendor/kubernetes-client.cjs",
    "^(\\.{1,2}/.*)\\.js$": "$1",
  },
  // Most of a suite's time is waiting (control planes, pulumi, polls), so several files run at once;
  // each worker's shared lab is used by one file at a time, and one lab starts at a time machine-wide
  // (harness/labs.ts). The order: test/sequencer.js.
  maxWorkers: workers,
  testSequencer: "<rootDir>/test/sequencer.js",
  globalSetup: "<rootDir>/test/global-setup.js",
  globalTeardown: "<rootDir>/test/global-teardown.js",
  setupFilesAfterEnv: ["<rootDir>/test/setup-after-env.ts"],
  // Unit tests (pure logic, a few type checks) take seconds; every test and hook that waits for labs,
  // pods or pulumi states its own bound, named for what it waits for. One that does not and hangs
  // fails here in 30 s, not after a generic 600.
  testTimeout: 30_000,
};
