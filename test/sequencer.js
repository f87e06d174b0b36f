// Orders the test files for several Jest workers: harness/test-order.ts says how and why. A file's
// duration is its last run's (Jest's cache) or, on a clean clone, test/durations.json: the per-file
// seconds of a full run, files of 5 s or more (refresh it from a run's "PASS file (N s)" lines when
// files grow or are added). Plain JavaScript on the compiled sources (`npm test` builds first):
// Jest loads the sequencer untransformed.
const Sequencer = require("@jest/test-sequencer").default;
const { readFileSync } = require("node:fs");
const { relative } = require("node:path");
const { testOrder, usesSharedLab } = require("../dist/harness/test-order.js");

const KNOWN = require("./durations.json");

/** Seconds a file not in the list is taken to last: unit tests are quick, the others start a lab. */
const guess = (path) => (path.startsWith("test/unit/") ? 1 : 60);

class LongestFirstSequencer extends Sequencer {
  sort(tests) {
    const files = tests.map((test) => {
      const cached = this.time(test);
      const path = relative(test.context.config.rootDir, test.path);
      return {
        test,
        seconds: cached !== undefined ? cached / 1000 : (KNOWN[path] ?? guess(path)),
        usesSharedLab: usesSharedLab(readFileSync(test.path, "utf8")),
      };
    });
    return testOrder(files).map((f) => f.test);
  }
}

module.exports = LongestFirstSequencer;
