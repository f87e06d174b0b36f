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
  // Suites share local clusters (see harness/labs.ts); they run one at a time because the
  // machine has two cores and the clusters need them.
  maxWorkers: 1,
  globalSetup: "<rootDir>/test/global-setup.js",
  globalTeardown: "<rootDir>/test/global-teardown.js",
  testTimeout: 600000,
};
