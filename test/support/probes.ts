/**
 * Network probes run from inside a cluster's namespace, as that cluster's workloads would: each
 * is a short-lived Node process started with `ip netns exec`, bounded in time, and ended by the
 * probe itself (or by PID if it outlives its deadline).
 */
import { spawn, type ChildProcess } from "node:child_process";

/** Runs a Node snippet in namespace `netns`, or in the host's namespace when it is undefined. */
function nodeIn(netns: string | undefined, script: string, args: readonly string[]): ChildProcess {
  const command = [process.execPath, "-e", script, ...args];
  return netns === undefined
    ? spawn(command[0]!, command.slice(1), { stdio: ["ignore", "pipe", "pipe"] })
    : spawn("ip", ["netns", "exec", netns, ...command], { stdio: ["ignore", "pipe", "pipe"] });
}

function outputOf(child: ChildProcess, deadlineMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stdout!.on("data", (c) => (out += c));
    child.stderr!.on("data", (c) => (err += c));
    const timer = setTimeout(() => child.kill("SIGKILL"), deadlineMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      code === 0 ? resolve(out.trim()) : reject(new Error(`probe exited ${code}: ${err.trim() || out.trim()}`));
    });
  });
}

/** Whether a TCP connection from namespace `netns` (the host's if undefined) to `host:port` opens within `timeoutMs`. */
export async function canConnectTcp(netns: string | undefined, host: string, port: number, timeoutMs = 3000): Promise<boolean> {
  const script = `
    const s = require("node:net").connect(Number(process.argv[2]), process.argv[1]);
    s.setTimeout(Number(process.argv[3]), () => { console.log("timeout"); process.exit(0); });
    s.on("connect", () => { console.log("connected"); s.destroy(); });
    s.on("error", (e) => { console.log("error " + e.code); });`;
  const out = await outputOf(nodeIn(netns, script, [host, String(port), String(timeoutMs)]), timeoutMs + 5000);
  return out === "connected";
}

/**
 * Sends one UDP datagram from namespace `fromNetns` to `address:port`, where a listener in
 * `toNetns` waits for it; resolves with whether it arrived within `timeoutMs`.
 */
export async function udpArrives(fromNetns: string, toNetns: string, address: string, port: number, timeoutMs = 3000): Promise<boolean> {
  const token = `probe-${Math.random().toString(36).slice(2)}`;
  const listener = nodeIn(
    toNetns,
    `const s = require("node:dgram").createSocket("udp4");
     s.on("message", (m) => { if (String(m) === process.argv[2]) { console.log("arrived"); process.exit(0); } });
     s.bind(Number(process.argv[1]), () => console.error("bound"));
     setTimeout(() => { console.log("nothing"); process.exit(0); }, Number(process.argv[3]));`,
    [String(port), token, String(timeoutMs)],
  );
  try {
    // Send only once the listener is bound, then repeat a few times: UDP may drop the first.
    await new Promise<void>((resolve, reject) => {
      listener.stderr!.once("data", () => resolve());
      listener.once("error", reject);
    });
    const result = outputOf(listener, timeoutMs + 5000);
    const sender = `const s = require("node:dgram").createSocket("udp4"); let n = 0;
      const t = setInterval(() => { s.send(process.argv[3], Number(process.argv[2]), process.argv[1]); if (++n === 5) { clearInterval(t); s.close(); } }, 100);`;
    await outputOf(nodeIn(fromNetns, sender, [address, String(port), token]), 5000);
    return (await result) === "arrived";
  } finally {
    if (listener.exitCode === null) listener.kill("SIGKILL");
  }
}

/** Runs `body` while a TCP listener accepts connections on `port` in namespace `netns`. */
export async function withTcpListener<T>(netns: string, port: number, body: () => Promise<T>): Promise<T> {
  const listener = nodeIn(
    netns,
    `require("node:net").createServer((c) => c.end()).listen(Number(process.argv[1]), () => console.error("listening"));`,
    [String(port)],
  );
  try {
    await new Promise<void>((resolve, reject) => {
      listener.stderr!.once("data", () => resolve());
      listener.once("error", reject);
      listener.once("exit", (code) => reject(new Error(`listener in ${netns} exited (${code})`)));
    });
    return await body();
  } finally {
    listener.kill("SIGKILL");
  }
}
