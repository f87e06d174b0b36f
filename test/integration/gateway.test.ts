/**
 * The gateway's WireGuard tunnel on real clusters: two clusters with different pod CIDRs each get a
 * wireguard-go interface in their own namespace; g1 serves, g2 connects to g1's public address;
 * pods reach each other both ways (ping and TCP) through the tunnel, as its byte counters show;
 * deleting the interfaces leaves no link, process, socket or key file.
 */
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { runIn } from "../../host/exec.js";
import { addPodAddress, clusterOf, type ClusterState, type LabState } from "../../local-cluster/lab.js";
import { isRunning } from "../../host/processes.js";
import {
  addTunnelRoutes,
  configureWireguardPeer,
  deleteWireguardInterface,
  ensureWireguardInterface,
  forgePeerArgs,
  forgeWireguardKeyPair,
  linkExistsIn,
  parseWireguardDump,
  readWireguardStatus,
  waitForWireguardHandshake,
  wireguardInterfaceName,
  wireguardPublicKeyOf,
  wireguardSocketPath,
  type WireguardInterface,
  type WireguardPeerStatus,
} from "../../agent/gateway/index.js";
import { withLab } from "../../harness/labs.js";
import { pingReplies, tcpTransfer } from "../support/probes.js";

/** Each test's bound: pure checks, and (the last test) a private lab's start and a tunnel between its gateways. */
const TEST_BOUND_MS = 5 * 60_000;

/** Bytes each TCP transfer carries: enough to stand out from handshakes and keepalives. */
const TRANSFER_BYTES = 1 << 20;

function peerOf(status: { readonly peers: readonly WireguardPeerStatus[] }, publicKey: string): WireguardPeerStatus {
  const peer = status.peers.find((p) => p.publicKey === publicKey);
  if (!peer) throw new Error(`no peer ${publicKey} in ${JSON.stringify(status.peers)}`);
  return peer;
}

describe("gateway: keys, names and wg output (no cluster)", () => {
  test(
    "GIVEN a forged key pair WHEN `wg pubkey` reads the private key THEN it prints the same public key",
    async () => {
      for (let i = 0; i < 3; i++) {
        const pair = forgeWireguardKeyPair();
        expect(pair.privateKey).toMatch(/^[A-Za-z0-9+/]{43}=$/);
        const { stdout } = await execa("wg", ["pubkey"], { input: `${pair.privateKey}\n` });
        expect(stdout.trim()).toBe(pair.publicKey);
        expect(wireguardPublicKeyOf(pair.privateKey)).toBe(pair.publicKey);
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN peer ids WHEN named THEN names are deterministic, at most 15 characters and differ per local cluster",
    () => {
      const name = wireguardInterfaceName("g2", "lab/g1");
      expect(name).toMatch(/^lqw[0-9a-f]{12}$/);
      expect(wireguardInterfaceName("g2", "lab/g1")).toBe(name);
      expect(wireguardInterfaceName("g2", "lab/g3")).not.toBe(name);
      expect(wireguardInterfaceName("g1", "lab/g2")).not.toBe(name);
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a `wg show dump` WHEN parsed THEN peers carry endpoint, handshake and counters, and the private key is dropped",
    () => {
      const dump = [
        "cHJpdmF0ZQ==\tPUBLIC-A\t51820\toff",
        "PEER-B\t(none)\t172.29.4.11:51821\t10.142.0.0/16,10.254.0.2/32\t1700000000\t1234\t5678\t5",
        "PEER-C\t(none)\t(none)\t(none)\t0\t0\t0\toff",
      ].join("\n");
      const status = parseWireguardDump("lqwx", dump);
      expect(JSON.stringify(status)).not.toContain("cHJpdmF0ZQ==");
      expect(status).toEqual({
        ifname: "lqwx",
        publicKey: "PUBLIC-A",
        listenPort: 51820,
        peers: [
          {
            publicKey: "PEER-B",
            endpoint: "172.29.4.11:51821",
            allowedIps: ["10.142.0.0/16", "10.254.0.2/32"],
            latestHandshake: new Date(1_700_000_000_000),
            rxBytes: 1234,
            txBytes: 5678,
            keepaliveSeconds: 5,
          },
          {
            publicKey: "PEER-C",
            endpoint: undefined,
            allowedIps: [],
            latestHandshake: undefined,
            rxBytes: 0,
            txBytes: 0,
            keepaliveSeconds: undefined,
          },
        ],
      });
      expect(() => parseWireguardDump("lqwx", "a\tb")).toThrow(/wg show lqwx dump.*4 fields/);
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a peer with and without endpoint WHEN forged THEN `wg set` arguments carry exactly what is given",
    () => {
      const key = forgeWireguardKeyPair().publicKey;
      expect(forgePeerArgs({ netns: "n", ifname: "lqw1", peerPublicKey: key, allowedIps: ["10.1.0.0/16"] })).toEqual([
        "set",
        "lqw1",
        "peer",
        key,
        "allowed-ips",
        "10.1.0.0/16",
        "persistent-keepalive",
        "off",
      ]);
      expect(
        forgePeerArgs({
          netns: "n",
          ifname: "lqw1",
          peerPublicKey: key,
          endpoint: "1.2.3.4:51820",
          allowedIps: ["10.1.0.0/16", "10.2.0.1/32"],
          keepaliveSeconds: 5,
        }),
      ).toEqual([
        "set",
        "lqw1",
        "peer",
        key,
        "endpoint",
        "1.2.3.4:51820",
        "allowed-ips",
        "10.1.0.0/16,10.2.0.1/32",
        "persistent-keepalive",
        "5",
      ]);
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a bad interface spec WHEN ensured THEN every problem is reported at once and nothing starts",
    async () => {
      await expect(
        ensureWireguardInterface({
          netns: "no-such-ns-gw",
          ifname: "much-too-long-name",
          privateKey: "short",
          listenPort: 70000,
          address: "10.1.2.3",
          logFile: "/tmp/x.log",
        }),
      ).rejects.toThrow(
        /ifname "much-too-long-name"[\s\S]*listenPort 70000[\s\S]*address "10.1.2.3"[\s\S]*privateKey[\s\S]*netns "no-such-ns-gw"/,
      );
    },
    TEST_BOUND_MS,
  );
});

describe("gateway: WireGuard tunnel between two real clusters", () => {
  test(
    "GIVEN clusters g1 and g2 with different pod CIDRs WHEN g2 connects to g1's gateway THEN pods reach each other both " +
      "ways through the tunnel and deletion leaves nothing",
    async () => {
      await withLab(
        [
          { name: "g1", podCidr: "10.141.0.0/16" },
          { name: "g2", podCidr: "10.142.0.0/16" },
        ],
        {},
        async (lab: LabState) => {
          const [g1, g2] = [clusterOf(lab, "g1"), clusterOf(lab, "g2")];
          const keyDir = join(lab.dir, "gateway-keys");
          mkdirSync(keyDir, { mode: 0o700 });
          const side = (
            cluster: ClusterState,
            peer: ClusterState,
            pod: string,
            tunnel: string,
            peerTunnel: string,
          ) => ({
            cluster,
            pod,
            tunnel,
            keys: forgeWireguardKeyPair(),
            ifname: wireguardInterfaceName(peer.name, `${lab.name}/${cluster.name}`),
            allowedIps: [peer.podCidr, `${peerTunnel}/32`],
          });
          const a = side(g1, g2, "10.141.0.10", "10.254.0.1", "10.254.0.2");
          const b = side(g2, g1, "10.142.0.10", "10.254.0.2", "10.254.0.1");
          const made: WireguardInterface[] = [];
          const ensure = async (s: typeof a, listenPort: number): Promise<WireguardInterface> => {
            const wg = await ensureWireguardInterface({
              netns: s.cluster.netns,
              ifname: s.ifname,
              privateKey: s.keys.privateKey,
              listenPort,
              address: `${s.tunnel}/30`,
              logFile: join(s.cluster.dir, `${s.ifname}.log`),
              keyDir,
            });
            made.push(wg);
            return wg;
          };
          try {
            await addPodAddress(lab, "g1", a.pod);
            await addPodAddress(lab, "g2", b.pod);

            // g1 serves: it listens on 51820 and knows g2 only by key.
            const wgA = await ensure(a, 51820);
            expect(wgA.started).toBe(true);
            expect(wgA.publicKey).toBe(a.keys.publicKey);
            await configureWireguardPeer({
              netns: g1.netns,
              ifname: a.ifname,
              peerPublicKey: b.keys.publicKey,
              allowedIps: a.allowedIps,
            });
            await addTunnelRoutes(g1.netns, a.ifname, [g2.podCidr]);

            // g2 connects to g1's public address, with keepalive.
            await ensure(b, 51821);
            await configureWireguardPeer({
              netns: g2.netns,
              ifname: b.ifname,
              peerPublicKey: a.keys.publicKey,
              endpoint: `${g1.publicAddress}:51820`,
              allowedIps: b.allowedIps,
              keepaliveSeconds: 5,
            });
            await addTunnelRoutes(g2.netns, b.ifname, [g1.podCidr]);

            // Applying the same spec again changes nothing and starts nothing.
            const again = await ensure(a, 51820);
            expect(again.started).toBe(false);
            expect(again.process.pid).toBe(wgA.process.pid);
            await configureWireguardPeer({
              netns: g1.netns,
              ifname: a.ifname,
              peerPublicKey: b.keys.publicKey,
              allowedIps: a.allowedIps,
            });
            await addTunnelRoutes(g1.netns, a.ifname, [g2.podCidr]);

            // The handshake completes on both sides; g1 learned g2's endpoint from it.
            const seenByG1 = await waitForWireguardHandshake(g1.netns, a.ifname, b.keys.publicKey, {
              timeoutMs: 20_000,
            });
            await waitForWireguardHandshake(g2.netns, b.ifname, a.keys.publicKey, { timeoutMs: 20_000 });
            expect(seenByG1.endpoint).toBe(`${g2.publicAddress}:51821`);
            expect((await readWireguardStatus(g1.netns, a.ifname)).listenPort).toBe(51820);

            // Ping both ways, pod address to pod address.
            expect(await pingReplies(g1.netns, a.pod, b.pod)).toMatch(/3 received/);
            expect(await pingReplies(g2.netns, b.pod, a.pod)).toMatch(/3 received/);

            // TCP both ways; the tunnel's counters grow by at least what was sent.
            for (const [from, to] of [
              [a, b],
              [b, a],
            ] as const) {
              const fromPeerKey = to.keys.publicKey;
              const toPeerKey = from.keys.publicKey;
              const before = [
                peerOf(await readWireguardStatus(from.cluster.netns, from.ifname), fromPeerKey),
                peerOf(await readWireguardStatus(to.cluster.netns, to.ifname), toPeerKey),
              ];
              const received = await tcpTransfer(
                { netns: from.cluster.netns, address: from.pod },
                { netns: to.cluster.netns, address: to.pod },
                TRANSFER_BYTES,
              );
              expect(received).toBe(TRANSFER_BYTES);
              const after = [
                peerOf(await readWireguardStatus(from.cluster.netns, from.ifname), fromPeerKey),
                peerOf(await readWireguardStatus(to.cluster.netns, to.ifname), toPeerKey),
              ];
              expect(after[0]!.txBytes - before[0]!.txBytes).toBeGreaterThanOrEqual(TRANSFER_BYTES);
              expect(after[1]!.rxBytes - before[1]!.rxBytes).toBeGreaterThanOrEqual(TRANSFER_BYTES);
            }
          } finally {
            for (const [s, wg] of [
              [a, made.find((m) => m.ifname === a.ifname)],
              [b, made.find((m) => m.ifname === b.ifname)],
            ] as const) {
              await deleteWireguardInterface({
                netns: s.cluster.netns,
                ifname: s.ifname,
                ...(wg ? { process: wg.process } : {}),
                routes: [s === a ? g2.podCidr : g1.podCidr],
              });
            }
          }

          // Nothing is left: no link, process, socket or key file; the pods no longer reach each other.
          for (const s of [a, b]) {
            expect(await linkExistsIn(s.cluster.netns, s.ifname)).toBe(false);
            expect(existsSync(wireguardSocketPath(s.ifname))).toBe(false);
            expect(await runIn(s.cluster.netns, "ip", ["route", "show"])).not.toContain(s.ifname);
          }
          for (const wg of made) expect(isRunning(wg.process)).toBe(false);
          expect(readdirSync(keyDir)).toEqual([]);
          await expect(pingReplies(g1.netns, a.pod, b.pod)).rejects.toThrow(/ping/);
          // Deleting again is a no-op.
          expect(await deleteWireguardInterface({ netns: g1.netns, ifname: a.ifname })).toEqual([]);
        },
      );
    },
    TEST_BOUND_MS,
  );
});
