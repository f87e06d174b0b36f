/**
 * The SDK's declarations, as a user's program type-checks them, reach none of the provider's
 * implementation: a user with `skipLibCheck` off would check those too, with the Kubernetes
 * client's types they pull in. (Import cycles, the SDK's included, are test/unit/architecture.test.ts's.)
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as ts from "typescript";

const REPO = join(__dirname, "..", "..", "..", "..");
/** The package as built (`npm test` builds it first). */
const DIST = join(REPO, "dist");

/** The declaration files a program that imports the built SDK reads, as a user's TypeScript would. */
function declarationsReachedBySdk(): string[] {
  const program = ts.createProgram([join(DIST, "sdk", "nodejs", "index.d.ts")], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
    noEmit: true,
  });
  return program.getSourceFiles().map((file) => file.fileName);
}

describe("the SDK's imports", () => {
  test("GIVEN the built SDK's declarations WHEN a program type-checks them THEN what they reach outside sdk/ imports nothing (no Kubernetes types)", () => {
    const reached = declarationsReachedBySdk();
    const own = reached.filter((file) => file.startsWith(`${DIST}/`) && !file.startsWith(join(DIST, "sdk")));
    // The reading is real: TunnelEnd and ProviderHandover are declared outside sdk/.
    expect(own.length).toBeGreaterThan(0);
    const importing = own.filter(
      (file) => ts.preProcessFile(readFileSync(file, "utf8"), true, true).importedFiles.length,
    );
    expect(importing.map((file) => file.slice(DIST.length + 1))).toEqual([]);
    expect(reached.filter((file) => file.includes("/@kubernetes/"))).toEqual([]);
  });
});
