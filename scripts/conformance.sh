#!/usr/bin/env bash
# Issue 23's yardstick (not a test, not CI): builds what is missing, upstream's conformance suite
# (e2e.test) and agnhost included, then runs the selected conformance specs on a plain local cluster
# and on a virtual node, and prints each spec's result on both and the ratio. Arguments go to
# dist/bench/conformance/main.js, e.g. `scripts/conformance.sh --focus 'Secrets'`. Its labs live under
# $LIQO_TEST_LAB_ROOT (default /tmp/pulumi-liqo-conformance-labs). See docs/performance.md.
set -euo pipefail
# shellcheck source=lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
"$REPO_ROOT/scripts/toolchain.sh" conformance
prepare_as_root "the conformance passes create network namespaces and local clusters"
export LIQO_TEST_LAB_ROOT="${LIQO_TEST_LAB_ROOT:-/tmp/pulumi-liqo-conformance-labs}"
export KUBERNETES_VERSION
npm run --silent build
exec node dist/bench/conformance/main.js "$@"
