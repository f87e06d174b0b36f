#!/usr/bin/env bash
# The benchmarks (not tests): sets everything up (idempotent), builds, then measures and prints a
# table of figures and targets, and writes them as JSON under .bench-output/. Arguments go to
# dist/bench/main.js, e.g. `scripts/bench.sh tunnel --rounds 5`. See docs/performance.md.
set -euo pipefail
# shellcheck source=lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
prepare_as_root "the benchmarks create network namespaces and local clusters"
# The release the upgrade section starts from (built once; a warm run only checks it is there).
scripts/toolchain.sh previous-release
npm run --silent build
exec node dist/bench/main.js "$@"
