/**
 * Runs in every test file after Jest's globals are set up: a file that used the shared lab lets the
 * next one have it once its last test is done (see harness/labs.ts).
 */
import { releaseSharedLab } from "../harness/labs.js";

afterAll(releaseSharedLab);
