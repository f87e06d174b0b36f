/**
 * Messages to the engine, against a stand-in engine: a gRPC server of the Pulumi `Engine` service
 * on loopback, built from the same `@pulumi/pulumi` copy the provider host would load.
 */
import { createRequire } from "node:module";
import { engineAddressOf, explainedDiff, logToEngine } from "../../../../provider/resources/engine-log.js";
import { URN_INPUT } from "../../../../provider/resources/hidden-inputs.js";

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
}

/** A stand-in engine that records what it is told; one that never answers with `silent`. */
async function standInEngine(
  options: { silent?: boolean } = {},
): Promise<{ address: string; received: Received[]; stop: () => void }> {
  const server = new grpc.Server();
  const received: Received[] = [];
  server.addService(services.EngineService, {
    log(
      call: { request: { getMessage(): string; getUrn(): string; getSeverity(): number } },
      callback: (error: null, value: unknown) => void,
    ) {
      received.push({
        message: call.request.getMessage(),
        urn: call.request.getUrn(),
        severity: call.request.getSeverity(),
      });
      if (!options.silent) callback(null, new Empty());
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error: Error | null, p: number) =>
      error ? reject(error) : resolve(p),
    ),
  );
  return { address: `127.0.0.1:${port}`, received, stop: () => server.forceShutdown() };
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
