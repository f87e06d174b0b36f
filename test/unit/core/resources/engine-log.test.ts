/**
 * Messages to the engine, against a stand-in engine: a gRPC server of the Pulumi `Engine` service
 * on loopback, built from the same `@pulumi/pulumi` copy the provider host would load.
 */
import { createRequire } from "node:module";
import { engineAddressOf, explainedDiff, logToEngine, showingSteps } from "../../../../core/resources/engine-log.js";
import { URN_INPUT } from "../../../../core/resources/hidden-inputs.js";

const hostScript = require.resolve("@pulumi/pulumi/cmd/dynamic-provider");
const load = createRequire(hostScript);
const grpc = load("@grpc/grpc-js");
const services = load("../../proto/engine_grpc_pb");
const messages = load("../../proto/engine_pb");
const { Empty } = load("google-protobuf/google/protobuf/empty_pb.js");

interface Received {
  readonly message: string;
  readonly urn: string;
  readonly severity: number;
  /** A live status of the resource rather than a message. */
  readonly ephemeral: boolean;
}

/**
 * A stand-in engine that records what it is told, and the most calls it had in flight at once;
 * one that never answers with `silent`, one that answers after `answerAfterMs`.
 */
async function standInEngine(options: { silent?: boolean; answerAfterMs?: number } = {}): Promise<{
  address: string;
  received: Received[];
  mostInFlight: () => number;
  stop: () => void;
}> {
  const server = new grpc.Server();
  const received: Received[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  server.addService(services.EngineService, {
    log(
      call: {
        request: { getMessage(): string; getUrn(): string; getSeverity(): number; getEphemeral(): boolean };
      },
      callback: (error: null, value: unknown) => void,
    ) {
      received.push({
        message: call.request.getMessage(),
        urn: call.request.getUrn(),
        severity: call.request.getSeverity(),
        ephemeral: call.request.getEphemeral(),
      });
      if (options.silent) return;
      mostInFlight = Math.max(mostInFlight, ++inFlight);
      setTimeout(() => {
        inFlight--;
        callback(null, new Empty());
      }, options.answerAfterMs ?? 0);
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error: Error | null, p: number) =>
      error ? reject(error) : resolve(p),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    received,
    mostInFlight: () => mostInFlight,
    stop: () => server.forceShutdown(),
  };
}

describe("engine address", () => {
  test("GIVEN the dynamic provider host's arguments WHEN read THEN the engine's address is the first argument; in any other process there is none", () => {
    expect(engineAddressOf(["node", hostScript, "127.0.0.1:4000"])).toEqual({ hostScript, address: "127.0.0.1:4000" });
    expect(
      engineAddressOf(["node", "/x/node_modules/@pulumi/pulumi/cmd/dynamic-provider", "127.0.0.1:4000"])?.address,
    ).toBe("127.0.0.1:4000");
    expect(engineAddressOf(["node", "/x/node_modules/jest/bin/jest.js", "test/unit"])).toBeUndefined();
    expect(engineAddressOf(["node", hostScript])).toBeUndefined();
  });
});

describe("logToEngine", () => {
  test("GIVEN the provider host WHEN a message is logged THEN the engine gets it as information about the resource", async () => {
    const engine = await standInEngine();
    try {
      await logToEngine(
        'Tunnel "t": port changes → updates in place: …',
        "urn:pulumi:dev::p::pulumi-nodejs:dynamic/liqo:Tunnel::t",
        { argv: ["node", hostScript, engine.address] },
      );
      expect(engine.received).toEqual([
        {
          message: 'Tunnel "t": port changes → updates in place: …',
          urn: "urn:pulumi:dev::p::pulumi-nodejs:dynamic/liqo:Tunnel::t",
          severity: messages.LogSeverity.INFO,
          ephemeral: false,
        },
      ]);
    } finally {
      engine.stop();
    }
  });

  test("GIVEN an engine that never answers WHEN a message is logged THEN it gives up after the timeout, without an error", async () => {
    const engine = await standInEngine({ silent: true });
    try {
      const started = Date.now();
      await expect(
        logToEngine("m", "", { argv: ["node", hostScript, engine.address], timeoutMs: 200 }),
      ).resolves.toBeUndefined();
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      engine.stop();
    }
  });

  test("GIVEN no engine at the address, or another process WHEN a message is logged THEN it resolves without an error", async () => {
    await expect(
      logToEngine("m", "", { argv: ["node", hostScript, "127.0.0.1:1"], timeoutMs: 500 }),
    ).resolves.toBeUndefined();
    await expect(logToEngine("m", "")).resolves.toBeUndefined();
  });
});

describe("explainedDiff", () => {
  test("GIVEN changes found WHEN explained outside the provider host THEN the diff's result carries the changes and the replacing inputs", async () => {
    const news = { [URN_INPUT]: "urn:pulumi:dev::p::pulumi-nodejs:dynamic/liqo:Tunnel::t" };
    const found = { changed: ["providerClusterId", "port"], replaces: ["providerClusterId"], unknown: [] };
    expect(await explainedDiff("Tunnel", {}, "id", news, found, true)).toEqual({
      changes: true,
      replaces: ["providerClusterId"],
      deleteBeforeReplace: true,
    });
    expect(await explainedDiff("Tunnel", {}, "id", news, { changed: [], replaces: [], unknown: [] }, false)).toEqual({
      changes: false,
      replaces: [],
      deleteBeforeReplace: false,
    });
  });
});

describe("showingSteps", () => {
  const urn = "urn:pulumi:dev::p::pulumi-nodejs:dynamic/liqo:Peering::b-to-a";

  test("GIVEN steps WHEN run in the provider host THEN each is the resource's live status, in order, one at a time, then cleared", async () => {
    const engine = await standInEngine({ answerAfterMs: 30 });
    try {
      const result = await showingSteps(
        { [URN_INPUT]: urn },
        async (progress) => {
          progress.step(1, 3, "authentication: asking https://10.0.0.1:6444 for an identity");
          progress.step(2, 3, "negotiation: waiting for an offer from provider a");
          return "peered";
        },
        { argv: ["node", hostScript, engine.address] },
      );
      expect(result).toBe("peered");
      const status = (message: string) => ({ message, urn, severity: messages.LogSeverity.INFO, ephemeral: true });
      expect(engine.received).toEqual([
        status("[1/3] authentication: asking https://10.0.0.1:6444 for an identity"),
        status("[2/3] negotiation: waiting for an offer from provider a"),
        status(""),
      ]);
      expect(engine.mostInFlight()).toBe(1);
    } finally {
      engine.stop();
    }
  });

  test("GIVEN an operation that fails at a step WHEN it runs THEN its error comes back unchanged and the status is cleared before", async () => {
    const engine = await standInEngine();
    try {
      const failure = new Error("negotiation: no offer from provider a within 300 s");
      await expect(
        showingSteps(
          { [URN_INPUT]: urn },
          async (progress) => {
            progress.step(2, 3, "negotiation: waiting for an offer from provider a");
            throw failure;
          },
          { argv: ["node", hostScript, engine.address] },
        ),
      ).rejects.toBe(failure);
      expect(engine.received.map((r) => [r.message, r.urn, r.ephemeral])).toEqual([
        ["[2/3] negotiation: waiting for an offer from provider a", urn, true],
        ["", urn, true],
      ]);
    } finally {
      engine.stop();
    }
  });

  test("GIVEN inputs without the resource's URN WHEN an operation shows steps THEN nothing is sent (the stack's row is no place for them)", async () => {
    const engine = await standInEngine();
    try {
      await showingSteps({}, async (progress) => progress.step(1, 1, "network fabric: removing the tunnel"), {
        argv: ["node", hostScript, engine.address],
      });
      expect(engine.received).toEqual([]);
    } finally {
      engine.stop();
    }
  });
});
