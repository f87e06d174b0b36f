# Source this file to get the project's Node, pulumi, Kubernetes, etcd and wireguard-go first
# on PATH, with Pulumi set up to work offline. Sourcing it changes nothing on disk.
# shellcheck source=lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
PATH="$(toolchain_path):$PATH"
export PATH LIQO_CACHE
export PULUMI_SKIP_UPDATE_CHECK=true
export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
export PULUMI_HOME="${PULUMI_HOME:-$LIQO_CACHE/pulumi-home}"
# Node keeps the compiled code of the modules it loads (the Pulumi SDK, the Kubernetes client) here,
# so that each of the many short node processes of a run (a Pulumi program, a dynamic provider, the
# clusters CLI) starts on less CPU. Node keys the cache by its own version.
export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE:-$LIQO_CACHE/node-compile-cache}"
