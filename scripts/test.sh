#!/usr/bin/env bash
# Runs the whole test suite: the lint (ESLint and Prettier's layout), unit tests of pure logic,
# integration tests on real local clusters, and end-to-end tests through the real `pulumi` CLI.
# Sets everything up first (idempotent).
# Extra arguments go to Jest, e.g. `scripts/test.sh test/unit`.
set -euo pipefail
# shellcheck source=lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
prepare_as_root "the tests create network namespaces, bridges and firewall rules"
# The one other release the suite runs (the matrix's smoke run), built once like the default.
scripts/toolchain.sh kubernetes "$MATRIX_SMOKE_CONSUMER"
# And the release the upgrade test starts from, built once from this repository's history.
scripts/toolchain.sh previous-release
# And upstream's conformance suite and its images' parts, for the yardstick's smoke run.
scripts/toolchain.sh conformance
mkdir -p .test-output
status=0
# The lint runs beside the build (each takes one core for about 20 s) and fails the run at the end,
# so that one report has both.
npm run --silent lint > .test-output/lint.log 2>&1 &
lint_pid=$!
npm test --silent -- --json --outputFile=.test-output/results.json "$@" || status=$?
lint_status=0
wait "$lint_pid" || lint_status=$?
cat .test-output/lint.log
# One closing line in the plain "N passed, N failed" form that any CI reads.
node -e '
  const r = JSON.parse(require("fs").readFileSync(".test-output/results.json", "utf8"));
  const skipped = r.numPendingTests + r.numTodoTests;
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""));
' || true
[ "$lint_status" -eq 0 ] || echo "lint: failed (npm run lint; npm run format fixes the layout)"
[ "$status" -ne 0 ] || status=$lint_status
exit "$status"
