/**
 * Runs in every test file after Jest's globals are set up. A file that used the shared lab lets the
 * next one have it once its last test is done; a file that does not use it takes it down first,
 * since the test order runs such files only after every file that does (see harness/labs.ts and
 * harness/test-order.ts).
 */
import { readFileSync } from "node:fs";
import { releaseSharedLab, retireSharedLab, RETIRE_SHARED_LAB_BOUND_MS } from "../harness/labs.js";
import { usesSharedLab } from "../harness/test-order.js";

const testPath = expect.getState().testPath;
if (testPath !== undefined && !usesSharedLab(readFileSync(testPath, "utf8")))
  beforeAll(() => retireSharedLab(), RETIRE_SHARED_LAB_BOUND_MS);

afterAll(releaseSharedLab);
