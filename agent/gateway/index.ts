/** The gateway side of the network fabric: WireGuard keys, interface, peer, routes and status. */
export * from "./commands.js";
export * from "./handshake.js";
export * from "./interface.js";
export * from "./keys.js";
export * from "./status.js";
