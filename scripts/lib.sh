# Shared shell helpers: the cache location, progress lines and failures. Sourced, never run.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Built tools live outside the repo, keyed by version, so clean clones and CI reuse them.
LIQO_CACHE="${LIQO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-liqo}"
# shellcheck source=versions.sh
. "$REPO_ROOT/scripts/versions.sh"

NODE_HOME="$LIQO_CACHE/node-$NODE_VERSION"

step() { printf '[toolchain] %s\n' "$*" >&2; }
die() { printf '[toolchain] error: %s\n' "$*" >&2; exit 1; }

# Puts the project's own Node and every built tool first on PATH.
toolchain_path() {
  printf '%s' "$NODE_HOME/bin:$LIQO_CACHE/pulumi-$PULUMI_VERSION/bin:$LIQO_CACHE/kubernetes-$KUBERNETES_VERSION/bin:$LIQO_CACHE/etcd-$ETCD_VERSION/bin:$LIQO_CACHE/wireguard-go-$WIREGUARD_GO_VERSION/bin"
}

# The start of both README commands: build what is missing, enter the project's environment,
# insist on root (local clusters are network namespaces; $1 says what needs it) and cd to the repo.
prepare_as_root() {
  "$REPO_ROOT/scripts/toolchain.sh"
  # shellcheck source=env.sh
  . "$REPO_ROOT/scripts/env.sh"
  [ "$(id -u)" -eq 0 ] || die "$1: run as root"
  cd "$REPO_ROOT"
}
