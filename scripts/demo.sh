#!/usr/bin/env bash
# The main job: sets everything up (idempotent), starts two local clusters, and shows them.
set -euo pipefail
# shellcheck source=lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
prepare_as_root "local clusters live in network namespaces"
npm run --silent clusters -- up a b
cat <<'MSG'

Two local clusters are up. Look around:
  npm run clusters -- status
  ip netns exec liqo-demo-a ip addr            # cluster a's own network namespace
  KUBECONFIG=<path above> node -e '…'           # any Kubernetes client works with the kubeconfigs
Tear everything down:
  npm run clusters -- down
MSG
