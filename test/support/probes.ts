/**
 * Network probes run from inside a cluster's namespace, as that cluster's workloads would: each
 * is a short-lived Node process started with `ip netns exec`, bounded in time, and ended by the
 * probe itself (or by PID if it outlives its deadline).
 */
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { execa } from "execa";
import { runIn } from "../../host/exec.js";

/**
 * Runs a Node snippet in namespace `netns`, or in the host's namespace when it is undefined.
 * `env` reaches it only through its environment (never its command line, which any `ps` shows).
 */
function nodeIn(
  netns: string | undefined,
  script: string,
  args: readonly string[],
  env: Record<string, string> = {},
): ChildProcess {
  const command = [process.execPath, "-e", script, ...args];
  const options: SpawnOptions = { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } };
  return netns === undefined
    ? spawn(command[0]!, command.slice(1), options)
    : spawn("ip", ["netns", "exec", netns, ...command], options);
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
      if (code === 0) resolve(out.trim());
      else reject(new Error(`probe exited ${code}: ${err.trim() || out.trim()}`));
    });
  });
}

/** Whether a TCP connection from namespace `netns` (the host's if undefined) to `host:port` opens within `timeoutMs`. */
export async function canConnectTcp(
  netns: string | undefined,
  host: string,
  port: number,
  timeoutMs = 3000,
): Promise<boolean> {
  const script = `
    const s = require("node:net").connect(Number(process.argv[2]), process.argv[1]);
    s.setTimeout(Number(process.argv[3]), () => { console.log("timeout"); process.exit(0); });
    s.on("connect", () => { console.log("connected"); s.destroy(); });
    s.on("error", (e) => { console.log("error " + e.code); });`;
  const out = await outputOf(nodeIn(netns, script, [host, String(port), String(timeoutMs)]), timeoutMs + 5000);
  return out === "connected";
}

/**
 * What a TCP server at `host:port` says first, read from namespace `netns` (the host's if
 * undefined): its first chunk of data within `timeoutMs`; rejects when none comes.
 */
export function tcpGreeting(
  netns: string | undefined,
  host: string,
  port: number,
  timeoutMs = 10_000,
): Promise<string> {
  const script = `
    const s = require("node:net").connect(Number(process.argv[2]), process.argv[1]);
    s.setTimeout(Number(process.argv[3]), () => { console.error("no data in time"); process.exit(1); });
    s.on("data", (d) => { process.stdout.write(d); s.destroy(); });
    s.on("error", (e) => { console.error("error " + e.code); process.exit(1); });`;
  return outputOf(nodeIn(netns, script, [host, String(port), String(timeoutMs)]), timeoutMs + 5000);
}

/**
 * One HTTPS GET from namespace `netns` to `url`, presenting client certificate or bearer token
 * `client` if given (the server's own certificate is not checked: the probe is the stranger here). Resolves with
 * `<status> <body>`, or `tls <error code>` when the handshake is refused.
 */
export async function httpsAnswer(
  netns: string,
  url: string,
  client?: { readonly cert: string; readonly key: string } | { readonly token: string },
  timeoutMs = 5000,
): Promise<string> {
  const script = `
    const https = require("node:https");
    const cert = process.env.PROBE_CERT || undefined, key = process.env.PROBE_KEY || undefined;
    const headers = process.env.PROBE_TOKEN ? { Authorization: "Bearer " + process.env.PROBE_TOKEN } : {};
    const req = https.get(process.argv[1], { rejectUnauthorized: false, cert, key, headers, timeout: Number(process.argv[2]) }, (res) => {
      let body = ""; res.on("data", (c) => (body += c)); res.on("end", () => console.log(res.statusCode + " " + body.trim()));
    });
    req.on("timeout", () => { console.log("timeout"); req.destroy(); });
    req.on("error", (e) => console.log("tls " + (e.code || e.message)));`;
  const env: Record<string, string> = !client
    ? {}
    : "token" in client
      ? { PROBE_TOKEN: client.token }
      : { PROBE_CERT: client.cert, PROBE_KEY: client.key };
  return outputOf(nodeIn(netns, script, [url, String(timeoutMs)], env), timeoutMs + 5000);
}

/**
 * Sends one UDP datagram from namespace `fromNetns` to `address:port`, where a listener in
 * `toNetns` waits for it; resolves with whether it arrived within `timeoutMs`.
 */
export async function udpArrives(
  fromNetns: string,
  toNetns: string,
  address: string,
  port: number,
  timeoutMs = 3000,
): Promise<boolean> {
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
      const t = setInterval(() => {
        s.send(process.argv[3], Number(process.argv[2]), process.argv[1]);
        if (++n === 5) { clearInterval(t); s.close(); }
      }, 100);`;
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

/** Port of {@link tcpTransfer}'s listener. */
const TCP_PORT = 7171;

/**
 * Sends `bytes` over TCP from `from.address` (bound as the source) in `from.netns` to a listener on
 * `to.address:port` in `to.netns` (dialled as `to.seenAs` when the sender sees that address
 * remapped); resolves with the bytes the listener received. Both ends are
 * Node processes this test starts, bounded in time, and killed by handle if they outlive it.
 */
export async function tcpTransfer(
  from: { readonly netns: string; readonly address: string },
  to: { readonly netns: string; readonly address: string; readonly seenAs?: string },
  bytes: number,
): Promise<number> {
  const server = spawn(
    "ip",
    [
      "netns",
      "exec",
      to.netns,
      process.execPath,
      "-e",
      `let n = 0;
       const srv = require("node:net").createServer((c) => { c.on("data", (d) => (n += d.length)); c.on("end", () => { console.log(n); process.exit(0); }); });
       srv.listen(Number(process.argv[2]), process.argv[1], () => console.error("listening"));
       setTimeout(() => { console.log("timeout " + n); process.exit(1); }, 20000);`,
      to.address,
      String(TCP_PORT),
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  try {
    let out = "";
    server.stdout!.on("data", (c) => (out += c));
    const exited = new Promise<number | null>((resolve) => server.once("exit", resolve));
    await new Promise<void>((resolve, reject) => {
      server.stderr!.once("data", () => resolve());
      server.once("exit", (code) => reject(new Error(`TCP listener in ${to.netns} exited (${code}) before listening`)));
    });
    await execa(
      "ip",
      [
        "netns",
        "exec",
        from.netns,
        process.execPath,
        "-e",
        `const s = require("node:net").connect({ host: process.argv[1], port: Number(process.argv[2]), localAddress: process.argv[3] });
         s.setTimeout(15000, () => { console.error("timeout"); process.exit(1); });
         s.on("connect", () => s.end(Buffer.alloc(Number(process.argv[4]), 7)));
         s.on("close", () => process.exit(0));
         s.on("error", (e) => { console.error(e.message); process.exit(1); });`,
        to.seenAs ?? to.address,
        String(TCP_PORT),
        from.address,
        String(bytes),
      ],
      { timeout: 20_000 },
    );
    const code = await exited;
    if (code !== 0) throw new Error(`TCP listener in ${to.netns} exited ${code}: ${out.trim()}`);
    return Number(out.trim());
  } finally {
    if (server.exitCode === null) server.kill("SIGKILL");
  }
}

/** Pings `target` from pod address `source` in `netns` until 3 replies (15 s at most); throws, quoting ping, if fewer came. */
export async function pingReplies(netns: string, source: string, target: string): Promise<string> {
  // With -w, ping waits for 3 replies (not 3 sends) until the deadline: a packet lost on a loaded
  // machine is sent again instead of failing the check.
  return runIn(netns, "ping", ["-I", source, "-c", "3", "-i", "0.2", "-w", "15", target]);
}
