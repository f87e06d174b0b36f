#!/usr/bin/env bash
# The main job: sets everything up (idempotent), starts two local clusters, peers cluster b with
# cluster a through `pulumi up` of examples/local-peering, and shows the result: the virtual node
# in b, a pod the scheduler places on it, and a pod of b calling a pod of a through the WireGuard tunnel.
set -euo pipefail
# shellcheck source=lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
prepare_as_root "local clusters live in network namespaces"
npm run --silent build

say() { printf '\n== %s\n' "$*"; }

say "[1/6] two local clusters, each with a worker node holding the agent image, and a load balancer (MetalLB) handing out addresses"
npm run --silent clusters -- up a b
kubectl_b() { kubectl --kubeconfig "${LIQO_LAB_ROOT:-/tmp/pulumi-liqo-labs}/demo/b/admin.kubeconfig" "$@"; }
# The namespace of b that the stack offloads (a NamespaceOffloading needs it to exist).
kubectl_b get namespace shop >/dev/null 2>&1 || kubectl_b create namespace shop

say "[2/6] pulumi up: Cluster a, Cluster b (each deploys the agent, gateway and route agents as pods, behind load-balancer addresses it reads back), a PeeringToken on a, the Peering b -> a, its Tunnel, and b's namespace shop offloaded to a"
# The demo's state lives in the cache, encrypted with a passphrase made once and kept 0600 beside it.
export PULUMI_BACKEND_URL="file://$LIQO_CACHE/demo-state"
passphrase_file="$LIQO_CACHE/demo-passphrase"
[ -s "$passphrase_file" ] || (umask 077 && head -c 24 /dev/urandom | base64 >"$passphrase_file")
export PULUMI_CONFIG_PASSPHRASE_FILE="$passphrase_file"
mkdir -p "$LIQO_CACHE/demo-state"
cd "$REPO_ROOT/examples/local-peering"
npm install --no-audit --no-fund --loglevel=error
labs="${LIQO_LAB_ROOT:-/tmp/pulumi-liqo-labs}/demo"
agent_image=$(cd "$REPO_ROOT" && node dist/local-cluster/cli.js agent-image)
configure_stack() {
  # A stack file left beside a state that is gone (a cleared cache) holds the salt of another passphrase.
  pulumi stack ls --json 2>/dev/null | grep -q '"name": "demo"' || rm -f Pulumi.demo.yaml
  pulumi stack select --create demo --non-interactive >/dev/null
  pulumi config set aKubeconfig "$labs/a/admin.kubeconfig"
  pulumi config set bKubeconfig "$labs/b/admin.kubeconfig"
  # What the README's program leaves out, the demo does too: no CIDRs (each Cluster reads what its
  # cluster declares), no exposure (LoadBalancer: the clusters' MetalLB gives the agent's and the
  # gateway's Services addresses, which each Cluster reads back), no aGatewayAddress (b's gateway
  # dials where a's Cluster says its gateway is reached). A stack of an earlier demo may have them.
  for key in aPodCidr aServiceCidr bPodCidr bServiceCidr aGatewayAddress; do
    pulumi config rm "$key" >/dev/null 2>&1 || true
  done
  pulumi config set agentImage "$agent_image"
  pulumi config set offloadNamespace shop
  pulumi config set podOffloading remote
}
configure_stack
# A stack left by an earlier demo whose clusters were torn down describes clusters that are gone
# (new ones have new certificates): its refresh fails, and the demo starts the stack afresh.
if ! pulumi refresh --yes --non-interactive >/dev/null 2>&1; then
  echo "the previous demo's clusters are gone: starting its stack afresh"
  pulumi stack rm --force --yes --non-interactive demo >/dev/null
  configure_stack
fi
pulumi up --yes --non-interactive
cd "$REPO_ROOT"

say "[3/6] the nodes of cluster b: liqo-a stands for what cluster a offers; a's Services, at the addresses its load balancer gave"
npm run --silent clusters -- nodes b
kubectl --kubeconfig "$labs/a/admin.kubeconfig" get services -n pulumi-liqo-system

say "[4/6] a real pod of b calls a real pod of a by its address: only the WireGuard tunnel carries it"
node dist/local-cluster/cli.js podtool a
a_pod_ip=$(node dist/local-cluster/cli.js podtool a | awk '{print $NF}')
node dist/local-cluster/cli.js podtool b
echo "kubectl exec podtool-b-n1 -- /podtool tcp $a_pod_ip:8080 (in cluster b):"
node dist/local-cluster/cli.js pod-call b "$a_pod_ip"

say "[5/6] an unmodified app (examples/local-peering/app.yaml: a Deployment and its Service) applied to shop runs on a; b's pod calls it by name"
kubectl_b apply -n shop -f examples/local-peering/app.yaml
kubectl_b rollout status -n shop deployment/web --timeout=180s
kubectl_b get pods -n shop -o wide
echo "kubectl exec podtool-b-n1 -- /podtool tcp web.shop:8080 (in cluster b):"
kubectl_b exec podtool-b-n1 -- /podtool tcp web.shop:8080

say "[6/6] and the app calls a Service of b by name: db, in front of b's own pod, reached through a's cluster DNS and the tunnel"
b_pod_ip=$(node dist/local-cluster/cli.js podtool b | awk '{print $NF}')
kubectl_b apply -n shop -f - <<YAML
apiVersion: v1
kind: Service
metadata: { name: db }
spec: { ports: [{ port: 8080 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: db-1, labels: { kubernetes.io/service-name: db } }
addressType: IPv4
endpoints: [{ addresses: ["$b_pod_ip"] }]
ports: [{ port: 8080, protocol: TCP }]
YAML
echo "kubectl exec deployment/web -- /podtool tcp db:8080 (in cluster b; the pod runs on a):"
# The Service reaches a at b's agent's next pass (every 10 s).
for attempt in $(seq 1 30); do
  if kubectl_b exec -n shop deployment/web -- /podtool tcp db:8080 2>/dev/null; then break; fi
  [ "$attempt" -lt 30 ] || { echo "db:8080 not reached from a within 60 s" >&2; exit 1; }
  sleep 2
done

cat <<MSG

Peered. Look around (first: . scripts/env.sh):
  npm run clusters -- status                 # addresses, processes, kubeconfig paths
  npm run clusters -- nodes                  # nodes of both clusters
  kubectl --kubeconfig $labs/a/admin.kubeconfig -n pulumi-liqo-system logs deploy/pulumi-liqo-agent   # a's agent pod
  cd examples/local-peering && PULUMI_BACKEND_URL=$PULUMI_BACKEND_URL PULUMI_CONFIG_PASSPHRASE_FILE=$passphrase_file pulumi stack
Tear it all down:
  (cd examples/local-peering && PULUMI_BACKEND_URL=$PULUMI_BACKEND_URL PULUMI_CONFIG_PASSPHRASE_FILE=$passphrase_file pulumi destroy --yes)
  npm run clusters -- down
MSG
