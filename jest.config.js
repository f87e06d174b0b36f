// Tests run from TypeScript sources through ts-jest. ESM-only dependencies load through Node's
// require(esm), which Jest supports on Node 24.9+ with --experimental-vm-modules (see package.json).
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: { "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.json" }] },
  // Suites share local clusters started once per run (see test/global-setup.ts); they run one at
  // a time because the machine has two cores and the clusters need them.
  maxWorkers: 1,
  testTimeout: 600000,
};
