#!/usr/bin/env bash
# The compatibility matrix (not a test, not CI): builds what is missing, every supported Kubernetes
# release included, then runs one scenario per combination of consumer release × provider release
# × kube-proxy mode × CNI, one local lab at a time, and prints the table docs/compatibility.md
# holds. Arguments go to dist/bench/matrix/main.js, e.g. `scripts/matrix.sh --combination b=1.35,a=1.37`.
# Its labs live under $LIQO_TEST_LAB_ROOT (default /tmp/pulumi-liqo-matrix-labs).
set -euo pipefail
# shellcheck source=lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
minors=()
for release in $KUBERNETES_RELEASES; do minors+=("${release%.*}"); done
"$REPO_ROOT/scripts/toolchain.sh" kubernetes "${minors[@]}"
prepare_as_root "the matrix creates network namespaces and local clusters"
export LIQO_TEST_LAB_ROOT="${LIQO_TEST_LAB_ROOT:-/tmp/pulumi-liqo-matrix-labs}"
npm run --silent build
exec node dist/bench/matrix/main.js "$@"
