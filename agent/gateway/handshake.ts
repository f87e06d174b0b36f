/** The one wait of a gateway: for the first WireGuard handshake with a peer. */
import { describeNamespace } from "../../host/namespaces.js";
import { poll } from "../../core/wait/poll.js";
import { readWireguardStatus } from "./interface.js";
import type { WireguardPeerStatus } from "./status.js";

/** Knobs of {@link waitForWireguardHandshake}. */
export interface HandshakeWaitOptions {
  /** Give up after this long. @default 30000 */
  readonly timeoutMs?: number;
  /** The operation's shared deadline. */
  readonly signal?: AbortSignal;
}

/**
 * Waits until interface `ifname` in `netns` has completed a handshake with the peer of key
 * `peerPublicKey`, and returns that peer's status. A timeout says what the peer looked like last:
 * absent, or its endpoint and byte counters.
 */
export function waitForWireguardHandshake(
  netns: string | undefined,
  ifname: string,
  peerPublicKey: string,
  options: HandshakeWaitOptions = {},
): Promise<WireguardPeerStatus> {
  return poll(
    {
      step: "gateway",
      object: `WireGuard handshake of ${ifname} with peer ${peerPublicKey.slice(0, 8)}…`,
      endpoint: describeNamespace(netns),
    },
    { timeoutMs: options.timeoutMs ?? 30_000, intervalMs: 100, ...(options.signal ? { signal: options.signal } : {}) },
    async () => {
      const peer = (await readWireguardStatus(netns, ifname)).peers.find((p) => p.publicKey === peerPublicKey);
      if (!peer) return { done: false, state: "peer not configured" };
      if (peer.latestHandshake) return { done: true, value: peer };
      return {
        done: false,
        state: `no handshake yet (endpoint ${peer.endpoint ?? "unknown"}, rx ${peer.rxBytes} B, tx ${peer.txBytes} B)`,
      };
    },
  );
}
