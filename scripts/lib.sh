# Shared shell helpers: the cache location, progress lines and failures. Sourced, never run.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Built tools live outside the repo, keyed by version, so clean clones and CI reuse them.
LIQO_CACHE="${LIQO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-liqo}"
# shellcheck source=versions.sh
. "$REPO_ROOT/scripts/versions.sh"

NODE_HOME="$LIQO_CACHE/node-$NODE_VERSION"
# podtool (the test images' one program) is ours: its cache key is its source's hash, so an edit
# rebuilds it without a version to bump.
PODTOOL_HOME="$LIQO_CACHE/podtool-$(sha256sum "$REPO_ROOT/toolchain/podtool/main.go" | cut -c1-12)"
# CoreDNS with the plugins toolchain/coredns/main.go names: keyed by version and that file's hash.
COREDNS_HOME="$LIQO_CACHE/coredns-$COREDNS_VERSION-$(sha256sum "$REPO_ROOT/toolchain/coredns/main.go" | cut -c1-8)"
METRICS_SERVER_HOME="$LIQO_CACHE/metrics-server-$METRICS_SERVER_VERSION"
# local-path-provisioner (bin/) and the static busybox of its image (root/, Debian's package unpacked;
# the directory named without the version's epoch, whose colon a path list would split): found by
# these variables (image/build.ts), not on PATH, where this busybox would shadow the machine's.
LOCAL_PATH_PROVISIONER_HOME="$LIQO_CACHE/local-path-provisioner-$LOCAL_PATH_PROVISIONER_VERSION"
export LIQO_LOCAL_PATH_PROVISIONER_HOME="$LOCAL_PATH_PROVISIONER_HOME"
BUSYBOX_HOME="$LIQO_CACHE/busybox-static-${BUSYBOX_DEBIAN_VERSION#*:}"
export LIQO_BUSYBOX_HOME="$BUSYBOX_HOME"
# MetalLB's controller and speaker, and the module's CRDs and RBAC (local-cluster/load-balancer.ts):
# found by this variable, not on PATH, where commands named "controller" and "speaker" would mislead.
METALLB_HOME="$LIQO_CACHE/metallb-$METALLB_VERSION"
export LIQO_METALLB_HOME="$METALLB_HOME"
# Flannel's flanneld (bin/) and CNI plugin (cni/, a directory of CNI plugins for containerd).
FLANNEL_HOME="$LIQO_CACHE/flannel-$FLANNEL_VERSION-cni-$FLANNEL_CNI_PLUGIN_VERSION"
export LIQO_FLANNEL_HOME="$FLANNEL_HOME"

# The project's Go language host and SDK generator (toolchain/pulumi-language-go), built against
# PULUMI_VERSION: keyed by that version and its sources' hash (every file, in a stable order), so
# an edit rebuilds it.
PULUMI_GO_HOME="$LIQO_CACHE/pulumi-language-go-$PULUMI_VERSION-$(cd "$REPO_ROOT"/toolchain/pulumi-language-go && find . -type f | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-12)"

# e2e.test and agnhost, built only for `npm run conformance` (scripts/toolchain.sh conformance).
LIQO_E2E_HOME="$LIQO_CACHE/kubernetes-e2e-$KUBERNETES_VERSION"
export LIQO_E2E_BIN_DIR="$LIQO_E2E_HOME/bin"
# The suite's images' busybox (bin/busybox), built from Debian's source package of busybox-static's
# release (BUSYBOX_DEBIAN_VERSION without its binNMU suffix, "+b1"): found by this variable, not on PATH.
E2E_BUSYBOX_SOURCE_VERSION=${BUSYBOX_DEBIAN_VERSION%+b[0-9]*}
export LIQO_E2E_BUSYBOX_HOME="$LIQO_CACHE/busybox-e2e-${E2E_BUSYBOX_SOURCE_VERSION#*:}"

# The previous release the upgrade test starts from, built only when asked (scripts/toolchain.sh previous-release).
export LIQO_PREVIOUS_RELEASE_HOME="$LIQO_CACHE/previous-release-$PREVIOUS_RELEASE"

# The supported Kubernetes releases, for the local clusters' `--kubernetes` (local-cluster/releases.ts).
export LIQO_KUBERNETES_RELEASES="$KUBERNETES_RELEASES"

# kubernetes_release MINOR: the pinned patch release of a supported minor release (1.37 → 1.37.2).
kubernetes_release() {
  local release
  for release in $KUBERNETES_RELEASES; do
    [ "${release%.*}" = "$1" ] && { printf '%s' "$release"; return 0; }
  done
  die "Kubernetes $1 is not a supported release; supported: ${KUBERNETES_RELEASES// /, }"
}

step() { printf '[toolchain] %s\n' "$*" >&2; }
die() { printf '[toolchain] error: %s\n' "$*" >&2; exit 1; }

# The CNI plugins the worker nodes' containerd runs (local-cluster/node.ts reads it).
export LIQO_CNI_BIN_DIR="$LIQO_CACHE/cni-plugins-$CNI_PLUGINS_DEBIAN_VERSION/root/usr/lib/cni"

# Puts the project's own Node and every built tool first on PATH: the worker nodes' kubelet,
# kube-proxy, kubectl, containerd (with its shim and ctr), runc, podtool, coredns and metrics-server too. The CNI plugins
# are not commands: containerd finds them by their directory, LIQO_CNI_BIN_DIR.
toolchain_path() {
  printf '%s' "$NODE_HOME/bin:$LIQO_CACHE/pulumi-$PULUMI_VERSION/bin:$LIQO_CACHE/pulumi-language-yaml-$PULUMI_YAML_VERSION/bin:$PULUMI_GO_HOME/bin:$LIQO_CACHE/kubernetes-$KUBERNETES_VERSION/bin:$LIQO_CACHE/etcd-$ETCD_VERSION/bin:$LIQO_CACHE/wireguard-go-$WIREGUARD_GO_VERSION/bin"
  printf ':%s' "$LIQO_CACHE/kubernetes-node-$KUBERNETES_VERSION/bin" "$LIQO_CACHE/containerd-$CONTAINERD_VERSION/bin" \
    "$LIQO_CACHE/runc-$RUNC_DEBIAN_VERSION/root/usr/sbin" "$PODTOOL_HOME/bin" "$COREDNS_HOME/bin" "$METRICS_SERVER_HOME/bin"
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
