/** Which side of a peering a tunnel's setting names: declared where the provider's code decides it. */
export type { PeeringSide } from "../../core/network-fabric/tunnel-end.js";
