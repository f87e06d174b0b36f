/**
 * Network namespaces, bridges and veth links: the "hosts" and the "wire" of the local clusters.
 * Every function is idempotent where it can be, so that a run that crashed half-way is cleaned up
 * by the same calls that tear a healthy one down.
 */
import { run, runIn, type CommandError } from "../host/exec.js";
import { namespaceExists } from "../host/namespaces.js";

export { namespaceExists, namespacePids } from "../host/namespaces.js";

/** Whether a link named `name` exists in the host's namespace. */
export async function linkExists(name: string): Promise<boolean> {
  return (await run("ip", ["-o", "link", "show"]))
    .split("\n")
    .some((line) => line.split(":")[1]?.trim().split("@")[0] === name);
}

/** Creates network namespace `name` with its loopback up. */
export async function createNamespace(name: string): Promise<void> {
  if (!namespaceExists(name)) await run("ip", ["netns", "add", name]);
  await runIn(name, "ip", ["link", "set", "lo", "up"]);
}

/** Deletes network namespace `name` (and the links inside it), if it exists. */
export async function deleteNamespace(name: string): Promise<void> {
  if (!namespaceExists(name)) return;
  await run("ip", ["netns", "delete", name]).catch((error: CommandError) => {
    // Gone between the look and the delete (another teardown of the same lab, under load): what was asked.
    if (namespaceExists(name)) throw error;
  });
}

/** Creates bridge `name` in the host namespace holding `addressWithPrefix` (e.g. `172.29.1.1/24`). */
export async function createBridge(name: string, addressWithPrefix: string): Promise<void> {
  if (!(await linkExists(name))) await run("ip", ["link", "add", name, "type", "bridge"]);
  await run("ip", ["addr", "replace", addressWithPrefix, "dev", name]);
  await run("ip", ["link", "set", name, "up"]);
}

/** Deletes host link `name` (bridge or veth end), if it exists. */
export async function deleteLink(name: string): Promise<void> {
  if (!(await linkExists(name))) return;
  await run("ip", ["link", "delete", name]).catch((error: CommandError) => {
    // A veth end vanishes on its own, a moment after its peer's namespace is deleted; `ip` says
    // so in two ways, depending on which check loses the race.
    if (!/Cannot find device|No such device/.test(error.stderr ?? "")) throw error;
  });
}

/**
 * Joins namespace `netns` to host bridge `bridge` with a veth pair: `hostEnd` stays on the bridge,
 * the other end becomes `eth0` in the namespace with `addressWithPrefix`.
 */
export async function attachToBridge(
  netns: string,
  bridge: string,
  hostEnd: string,
  addressWithPrefix: string,
): Promise<void> {
  await deleteLink(hostEnd);
  await run("ip", ["link", "add", hostEnd, "type", "veth", "peer", "name", `${hostEnd}p`]);
  await run("ip", ["link", "set", `${hostEnd}p`, "netns", netns]);
  await runIn(netns, "ip", ["link", "set", `${hostEnd}p`, "name", "eth0"]);
  await runIn(netns, "ip", ["addr", "add", addressWithPrefix, "dev", "eth0"]);
  await runIn(netns, "ip", ["link", "set", "eth0", "up"]);
  await run("ip", ["link", "set", hostEnd, "master", bridge]);
  await run("ip", ["link", "set", hostEnd, "up"]);
}

/**
 * Joins two namespaces with a veth pair named `ifname` on both sides, each end with its address.
 * The pair is created inside `left`, so nothing of it ever appears in the host namespace.
 */
export async function linkNamespaces(
  left: { readonly netns: string; readonly address: string },
  right: { readonly netns: string; readonly address: string },
  ifname: string,
): Promise<void> {
  await runIn(left.netns, "ip", ["link", "add", ifname, "type", "veth", "peer", "name", `${ifname}p`]);
  await runIn(left.netns, "ip", ["link", "set", `${ifname}p`, "netns", right.netns]);
  await runIn(right.netns, "ip", ["link", "set", `${ifname}p`, "name", ifname]);
  for (const side of [left, right]) {
    await runIn(side.netns, "ip", ["addr", "add", side.address, "dev", ifname]);
    await runIn(side.netns, "ip", ["link", "set", ifname, "up"]);
  }
}

/**
 * Creates the port-less bridge `pods` that carries a cluster's "pod" addresses, as a CNI's bridge
 * would. (This kernel has no `dummy` link type; a bridge with no ports serves the same purpose.)
 */
export async function createPodInterface(netns: string): Promise<void> {
  await runIn(netns, "ip", ["link", "add", "pods", "type", "bridge"]);
  await runIn(netns, "ip", ["link", "set", "pods", "up"]);
}

/** Adds `address` (a single IP) to the `pods` interface of namespace `netns`. */
export async function addPodAddress(netns: string, address: string): Promise<void> {
  await runIn(netns, "ip", ["addr", "replace", `${address}/32`, "dev", "pods"]);
}
