#!/usr/bin/env bash
# Benchmark of the network fabric's tunnel (a command, not a test). Makes two bare network
# namespaces joined by a veth pair, and measures between them, with iperf3 (one TCP stream, 10 s):
#   (a) the plain veth;
#   (b) a WireGuard tunnel made by hand with wireguard-go, wg and ip;
#   (c) the same tunnel made with agent/gateway (ensureWireguardInterface & co.);
# and for each, the time to first packet: from the moment the link or interface is created to the
# first successful ping across it. Traffic flows only between the namespaces this script made.
# Everything it made (namespaces, processes by PID, control sockets, files) is removed on exit,
# also on failure or Ctrl-C.
#
# Usage: scripts/bench-tunnel.sh [seconds per iperf3 run, default 10]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=env.sh
. scripts/env.sh
SECONDS_PER_RUN="${1:-10}"
if ! [[ "$SECONDS_PER_RUN" =~ ^[0-9]+$ ]] || ((SECONDS_PER_RUN < 1 || SECONDS_PER_RUN > 60)); then
  echo "seconds per run: expected 1 to 60, got '$SECONDS_PER_RUN'" >&2
  exit 2
fi
if [[ $EUID -ne 0 ]]; then echo "needs root (network namespaces)" >&2; exit 2; fi
for tool in node wireguard-go wg ip iperf3 ping; do
  command -v "$tool" >/dev/null || { echo "missing $tool on PATH" >&2; exit 2; }
done

ID="$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
NA="lqbench-$ID-a"
NB="lqbench-$ID-b"
WORK="$(mktemp -d "/tmp/pulumi-liqo-bench-$ID.XXXXXX")"
PIDS=()     # every process this script started, by PID
IFNAMES=()  # every WireGuard interface name, for their control sockets
GBPS="" RETRANSMITS=""

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  for pid in "${PIDS[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then kill "$pid" 2>/dev/null || true; fi
  done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
  done
  for ns in "$NA" "$NB"; do
    if [[ -e "/var/run/netns/$ns" ]]; then ip netns delete "$ns"; fi
  done
  for ifname in "${IFNAMES[@]}"; do rm -f "/var/run/wireguard/$ifname.sock"; done
  rm -rf "$WORK"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# Pings $2 from namespace $1 until it answers (at most 30 s).
until_ping() {
  local deadline=$(($(now_ms) + 30000))
  until ip netns exec "$1" ping -c 1 -W 1 "$2" >/dev/null 2>&1; do
    (($(now_ms) < deadline)) || { echo "no ping reply from $2 within 30 s" >&2; return 1; }
  done
}

# Runs iperf3 from namespace $NA to a one-off server on $1 in $NB; sets GBPS and RETRANSMITS.
# (Called in this shell, not in a subshell, so that the server's PID reaches PIDS.)
throughput() {
  local addr="$1" json="$WORK/iperf-$1.json"
  ip netns exec "$NB" iperf3 -s -1 -B "$addr" -p 5201 >"$WORK/iperf-server-$addr.log" 2>&1 &
  local server=$!
  PIDS+=("$server")
  for _ in $(seq 50); do
    ip netns exec "$NB" ss -Hltn "sport = :5201" | grep -q . && break
    sleep 0.1
  done
  ip netns exec "$NA" timeout $((SECONDS_PER_RUN + 30)) iperf3 -c "$addr" -p 5201 -t "$SECONDS_PER_RUN" -J >"$json"
  wait "$server" || true
  read -r GBPS RETRANSMITS < <(node -e '
    const r = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
    if (r.error) { console.error(r.error); process.exit(1); }
    console.log((r.end.sum_received.bits_per_second / 1e9).toFixed(2), r.end.sum_sent.retransmits ?? "-");
  ' "$json")
  [[ -n "$GBPS" ]] || { echo "iperf3 to $addr gave no result; see $json" >&2; return 1; }
}

# Waits for wireguard-go's control socket of interface $1.
until_socket() {
  for _ in $(seq 100); do [[ -S "/var/run/wireguard/$1.sock" ]] && return 0; sleep 0.05; done
  echo "wireguard-go made no socket for $1" >&2
  return 1
}

echo "building agent/gateway (npx tsc)…" >&2
npx tsc -p tsconfig.json 2>&1 | grep -v '^npm warn' >&2 || true
[[ -f dist/agent/gateway/index.js ]] || { echo "build produced no dist/agent/gateway/index.js" >&2; exit 1; }

# --- the two namespaces and the wire between them -------------------------------------------
for ns in "$NA" "$NB"; do
  ip netns add "$ns"
  ip netns exec "$ns" ip link set lo up
done
T0="$(now_ms)"
ip netns exec "$NA" ip link add veth0 type veth peer name veth0 netns "$NB"
ip netns exec "$NA" ip addr add 10.201.0.1/24 dev veth0
ip netns exec "$NB" ip addr add 10.201.0.2/24 dev veth0
ip netns exec "$NA" ip link set veth0 up
ip netns exec "$NB" ip link set veth0 up
until_ping "$NA" 10.201.0.2
VETH_FIRST=$(($(now_ms) - T0))

echo "(a) plain veth: iperf3 ${SECONDS_PER_RUN} s…" >&2
throughput 10.201.0.2
VETH_GBPS=$GBPS VETH_RETR=$RETRANSMITS

# --- (b) WireGuard by hand --------------------------------------------------------------------
IFA="lqb${ID}ha"
IFB="lqb${ID}hb"
IFNAMES+=("$IFA" "$IFB")
KEY_A="$(wg genkey)"
KEY_B="$(wg genkey)"
PUB_A="$(wg pubkey <<<"$KEY_A")"
PUB_B="$(wg pubkey <<<"$KEY_B")"
T0="$(now_ms)"
ip netns exec "$NA" wireguard-go -f "$IFA" >"$WORK/$IFA.log" 2>&1 &
HAND_A=$!
PIDS+=("$HAND_A")
ip netns exec "$NB" wireguard-go -f "$IFB" >"$WORK/$IFB.log" 2>&1 &
HAND_B=$!
PIDS+=("$HAND_B")
until_socket "$IFA"
until_socket "$IFB"
# Keys go through process substitution: no key file ever exists.
ip netns exec "$NA" wg set "$IFA" private-key <(echo "$KEY_A") listen-port 51820 peer "$PUB_B" allowed-ips 10.202.0.2/32
ip netns exec "$NB" wg set "$IFB" private-key <(echo "$KEY_B") listen-port 51821 \
  peer "$PUB_A" endpoint 10.201.0.1:51820 allowed-ips 10.202.0.1/32 persistent-keepalive 5
ip netns exec "$NA" ip addr add 10.202.0.1/30 dev "$IFA"
ip netns exec "$NB" ip addr add 10.202.0.2/30 dev "$IFB"
ip netns exec "$NA" ip link set "$IFA" mtu 1420 up
ip netns exec "$NB" ip link set "$IFB" mtu 1420 up
until_ping "$NB" 10.202.0.1
HAND_FIRST=$(($(now_ms) - T0))

echo "(b) WireGuard by hand: iperf3 ${SECONDS_PER_RUN} s…" >&2
throughput 10.202.0.2
HAND_GBPS=$GBPS HAND_RETR=$RETRANSMITS
for pid in "$HAND_A" "$HAND_B"; do kill "$pid"; wait "$pid" 2>/dev/null || true; done

# --- (c) WireGuard with agent/gateway ----------------------------------------------------------
# One Node run brings both ends up and waits for the first ping; it prints the two wireguard-go
# PIDs first thing after each start, so that this script can end them even if Node fails.
GATEWAY_JS="$WORK/gateway-up.js"
cat >"$GATEWAY_JS" <<'EOF'
const gw = require(process.argv[2]);
const { runIn } = require(process.argv[3]);
const [na, nb, ifa, ifb, work] = process.argv.slice(4);
(async () => {
  const [a, b] = [gw.forgeWireguardKeyPair(), gw.forgeWireguardKeyPair()];
  const t0 = performance.now();
  const wa = await gw.ensureWireguardInterface({ netns: na, ifname: ifa, privateKey: a.privateKey, listenPort: 51820, address: "10.203.0.1/30", logFile: `${work}/${ifa}.log`, keyDir: work });
  console.log(`pid ${wa.process.pid}`);
  const wb = await gw.ensureWireguardInterface({ netns: nb, ifname: ifb, privateKey: b.privateKey, listenPort: 51821, address: "10.203.0.2/30", logFile: `${work}/${ifb}.log`, keyDir: work });
  console.log(`pid ${wb.process.pid}`);
  await gw.configureWireguardPeer({ netns: na, ifname: ifa, peerPublicKey: b.publicKey, allowedIps: ["10.203.0.2/32"] });
  await gw.configureWireguardPeer({ netns: nb, ifname: ifb, peerPublicKey: a.publicKey, endpoint: "10.201.0.1:51820", allowedIps: ["10.203.0.1/32"], keepaliveSeconds: 5 });
  for (;;) {
    try { await runIn(nb, "ping", ["-c", "1", "-W", "1", "10.203.0.1"]); break; } catch { if (performance.now() - t0 > 30000) throw new Error("no ping reply within 30 s"); }
  }
  console.log(`first ${Math.round(performance.now() - t0)}`);
})().catch((e) => { console.error(e.message); process.exit(1); });
EOF
IFA="$(node -e 'console.log(require(process.argv[1]).wireguardInterfaceName("a", process.argv[2]))' "$ROOT/dist/agent/gateway/index.js" "bench-$ID")"
IFB="$(node -e 'console.log(require(process.argv[1]).wireguardInterfaceName("b", process.argv[2]))' "$ROOT/dist/agent/gateway/index.js" "bench-$ID")"
IFNAMES+=("$IFA" "$IFB")
GW_FIRST=""
while read -r word value; do
  case "$word" in
    pid) PIDS+=("$value") ;;
    first) GW_FIRST="$value" ;;
  esac
done < <(node "$GATEWAY_JS" "$ROOT/dist/agent/gateway/index.js" "$ROOT/dist/local-cluster/exec.js" "$NA" "$NB" "$IFA" "$IFB" "$WORK")
[[ -n "$GW_FIRST" ]] || { echo "(c) the gateway functions did not bring the tunnel up" >&2; exit 1; }

echo "(c) WireGuard via agent/gateway: iperf3 ${SECONDS_PER_RUN} s…" >&2
throughput 10.203.0.2
GW_GBPS=$GBPS GW_RETR=$RETRANSMITS
node -e '
  const gw = require(process.argv[1]);
  (async () => {
    for (const [netns, ifname] of [[process.argv[2], process.argv[4]], [process.argv[3], process.argv[5]]]) {
      for (const line of await gw.deleteWireguardInterface({ netns, ifname })) console.error(`removed ${line}`);
    }
  })().catch((e) => { console.error(e.message); process.exit(1); });
' "$ROOT/dist/agent/gateway/index.js" "$NA" "$NB" "$IFA" "$IFB"
if compgen -G "$WORK/.wg-key-*" >/dev/null; then echo "a key file was left in $WORK" >&2; exit 1; fi

# --- the table ----------------------------------------------------------------------------------
echo
echo "wireguard-go: $(wireguard-go --version | head -1); kernel $(uname -r); $(nproc) CPUs; load average before the table: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "iperf3: one TCP stream, ${SECONDS_PER_RUN} s, namespace $NA -> $NB; WireGuard MTU 1420"
printf '%-34s %12s %12s %18s\n' "path" "Gbit/s" "retransmits" "first packet (ms)"
printf '%-34s %12s %12s %18s\n' "(a) plain veth" "$VETH_GBPS" "$VETH_RETR" "$VETH_FIRST"
printf '%-34s %12s %12s %18s\n' "(b) WireGuard by hand (wg, ip)" "$HAND_GBPS" "$HAND_RETR" "$HAND_FIRST"
printf '%-34s %12s %12s %18s\n' "(c) WireGuard via agent/gateway" "$GW_GBPS" "$GW_RETR" "$GW_FIRST"
