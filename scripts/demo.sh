#!/usr/bin/env bash
# The main job: sets everything up (idempotent), starts two local clusters, and shows them.
set -euo pipefail
# shellcheck source=lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
prepare_as_root "local clusters live in network namespaces"
npm run --silent clusters -- up a b
cat <<'MSG'

Two local clusters are up, each with its agent. Look around:
  . scripts/env.sh                              # the project's Node and tools first on PATH
  npm run clusters -- status                    # addresses, processes, kubeconfig paths
  ip netns exec liqo-demo-a ss -ltnp            # cluster a's control plane and agent, listening
  tail /tmp/pulumi-liqo-labs/demo/a/logs/agent.log
Tear everything down:
  npm run clusters -- down
MSG
