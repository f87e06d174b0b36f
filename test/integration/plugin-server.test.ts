/**
 * The plugin's gRPC service on the wire, as the engine's client calls it: served in this process on
 * a local port, called through `@pulumi/pulumi`'s own generated client. No cluster: a check, the
 * shape of a partial failure's status, and Cancel ending a create that hangs on an API server that
 * never answers.
 */
import * as grpc from "@grpc/grpc-js";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { createServer, type Socket } from "node:net";
import { ResourceProviderClient } from "@pulumi/pulumi/proto/provider_grpc_pb";
import { PluginInfo } from "@pulumi/pulumi/proto/plugin_pb";
import * as pb from "@pulumi/pulumi/proto/provider_pb";
import { Status } from "@pulumi/pulumi/proto/status_pb";
import { partialFailure } from "../../core/resources/partial.js";
import { schemaText } from "../../plugin/schema.js";
import { serve, statusOf } from "../../plugin/server.js";
import { SECRET_SIG, SIG_KEY } from "../../plugin/values.js";

const envelope = (value: unknown) => ({ [SIG_KEY]: SECRET_SIG, value });
const URN = "urn:pulumi:test::plugin::liqo:index:Cluster::a";

/** A unary call as a promise: `start` makes it with the callback given. */
function call<R>(start: (callback: (error: grpc.ServiceError | null, response: R) => void) => unknown): Promise<R> {
  return new Promise<R>((resolve, reject) => start((error, response) => (error ? reject(error) : resolve(response))));
}

describe("the plugin's gRPC service", () => {
  let server: grpc.Server;
  let client: ResourceProviderClient;
  beforeAll(async () => {
    const served = await serve(schemaText());
    server = served.server;
    client = new ResourceProviderClient(`127.0.0.1:${served.port}`, grpc.credentials.createInsecure());
  });
  afterAll(() => {
    client.close();
    server.forceShutdown();
  });

  test("GIVEN the engine's first calls WHEN answered THEN secrets and previews are taken, the schema and its version served", async () => {
    const handshake = await call<pb.ProviderHandshakeResponse>((done) =>
      client.handshake(new pb.ProviderHandshakeRequest().setEngineAddress("127.0.0.1:1"), done),
    );
    expect(handshake.getAcceptSecrets()).toBe(true);
    const configured = await call<pb.ConfigureResponse>((done) => client.configure(new pb.ConfigureRequest(), done));
    expect([configured.getAcceptsecrets(), configured.getSupportspreview()]).toEqual([true, true]);
    const schema = JSON.parse(
      (await call<pb.GetSchemaResponse>((done) => client.getSchema(new pb.GetSchemaRequest(), done))).getSchema(),
    ) as {
      version: string;
    };
    expect((await call<PluginInfo>((done) => client.getPluginInfo(new Empty(), done))).getVersion()).toBe(
      schema.version,
    );
  });

  test("GIVEN a Cluster whose secret kubeconfig is broken WHEN checked on the wire THEN one failure, no property, the value nowhere", async () => {
    const news = { name: "a", kubeconfig: envelope("apiVersion: v1\nclusters: []\nsecret-value: 1") };
    const response = await call<pb.CheckResponse>((done) =>
      client.check(
        new pb.CheckRequest()
          .setUrn(URN)
          .setType("liqo:index:Cluster")
          .setOlds(new Struct())
          .setNews(Struct.fromJavaScript(news)),
        done,
      ),
    );
    const failures = response.getFailuresList().map((f) => ({ property: f.getProperty(), reason: f.getReason() }));
    expect(failures).toEqual([{ property: "", reason: expect.stringMatching(/^kubeconfig: /) }]);
    expect(JSON.stringify(failures)).not.toContain("secret-value");
    expect(response.getInputs()?.toJavaScript()["kubeconfig"]).toEqual(news.kubeconfig);
  });

  test("GIVEN a create that failed half-way WHEN its error is shaped THEN ErrorResourceInitFailed with the id and outputs, in the status details", () => {
    const error = Object.assign(
      partialFailure(new Error("negotiation: no offer"), "c1-to-p1", { status: "incomplete" }),
      {
        properties: { status: "incomplete", consumerKubeconfig: envelope("kc") },
      },
    );
    const status = statusOf(error, { resources: { pods: 1 } });
    expect(status.code).toBe(grpc.status.UNKNOWN);
    const details = Status.deserializeBinary(
      status.metadata!.get("grpc-status-details-bin")[0] as Buffer,
    ).getDetailsList();
    const failed = details[0]!.unpack(
      pb.ErrorResourceInitFailed.deserializeBinary,
      "pulumirpc.ErrorResourceInitFailed",
    )!;
    expect(failed.getId()).toBe("c1-to-p1");
    expect(failed.getReasonsList()).toEqual(["negotiation: no offer"]);
    expect(failed.getProperties()?.toJavaScript()).toEqual({
      status: "incomplete",
      consumerKubeconfig: envelope("kc"),
    });
    expect(statusOf(new Error("refused")).metadata).toBeUndefined();
  });

  test("GIVEN a create hanging on an API server that never answers WHEN the engine cancels THEN it ends at once, saying so", async () => {
    const sockets = new Set<Socket>();
    const api = createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    try {
      const kubeconfig = JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "x", cluster: { server: `https://127.0.0.1:${(api.address() as { port: number }).port}` } }],
        users: [{ name: "x", user: { token: "t" } }],
        contexts: [{ name: "x", context: { cluster: "x", user: "x" } }],
        "current-context": "x",
      });
      const inputs = {
        name: "a",
        kubeconfig: envelope(kubeconfig),
        podCidr: "10.71.0.0/16",
        serviceCidr: "10.72.0.0/16",
      };
      // Its outcome is taken at once: the create ends while the test waits for the cancel's answer.
      const outcome = call<pb.CreateResponse>((done) =>
        client.create(
          new pb.CreateRequest().setUrn(URN).setType("liqo:index:Cluster").setProperties(Struct.fromJavaScript(inputs)),
          done,
        ),
      ).then(
        () => "created",
        (error: Error) => error.message,
      );
      // Cancel once the create is in flight: the API server has its connection.
      await new Promise<void>((resolve) => api.once("connection", () => resolve()));
      await call<Empty>((done) => client.cancel(new Empty(), done));
      expect(await outcome).toMatch(/cancelled by the engine \(the command was interrupted\)/);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => api.close(() => resolve()));
    }
  });
});
