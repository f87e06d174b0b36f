/**
 * The engine's `pulumirpc.ResourceProvider` service, served from the resources' own code: each
 * method converts its request from the wire, calls operations.ts, and converts the answer back.
 * Written against the generated service of `@pulumi/pulumi` itself, not its `provider.main`, which
 * drops what users need here: it ignores Configure's request and answers no Handshake (so the
 * engine never sends a preview to create or update), answers CheckConfig and DiffConfig
 * UNIMPLEMENTED, passes neither the timeout nor the preview flag to create, update and delete, and
 * returns no detailed diff. Methods not served here (Invoke, Call, Construct…) answer
 * UNIMPLEMENTED, as grpc-js does for a method a service leaves out.
 */
import type * as grpcTypes from "@grpc/grpc-js";
import type * as anyTypes from "google-protobuf/google/protobuf/any_pb";
import type * as emptyTypes from "google-protobuf/google/protobuf/empty_pb";
import type * as structTypes from "google-protobuf/google/protobuf/struct_pb";
import { createRequire } from "node:module";
import { ResourceProviderService } from "@pulumi/pulumi/proto/provider_grpc_pb";
import { PluginInfo } from "@pulumi/pulumi/proto/plugin_pb";
import * as pb from "@pulumi/pulumi/proto/provider_pb";
import { Status } from "@pulumi/pulumi/proto/status_pb";
import { reportToEngine } from "../core/resources/engine-log.js";
import { kindOf } from "./kinds.js";
import * as operations from "./operations.js";
import { schemaFacts, type SchemaFacts } from "./schema.js";
import type { Properties } from "./values.js";

// The gRPC runtime and protobuf classes of the very `@pulumi/pulumi` copy whose service this serves.
const fromPulumi = createRequire(require.resolve("@pulumi/pulumi/package.json"));
const grpc = fromPulumi("@grpc/grpc-js") as typeof grpcTypes;
const { Any } = fromPulumi("google-protobuf/google/protobuf/any_pb") as typeof anyTypes;
const { Empty } = fromPulumi("google-protobuf/google/protobuf/empty_pb") as typeof emptyTypes;
const { Struct } = fromPulumi("google-protobuf/google/protobuf/struct_pb") as typeof structTypes;

/** A request's properties as plain values ({} when absent). */
const plainOf = (struct: structTypes.Struct | undefined): Properties => (struct?.toJavaScript() ?? {}) as Properties;
/** Plain values as a `Struct` (a property left `undefined` is left out). */
const structOf = (properties: Properties): structTypes.Struct =>
  Struct.fromJavaScript(JSON.parse(JSON.stringify(properties)) as Record<string, structTypes.JavaScriptValue>);

/** The resource of a request: its type token (the request's, or the URN's last type) and URN. */
function targetOf(request: { getUrn(): string; getType(): string }): operations.Target {
  const urn = request.getUrn();
  const type = request.getType() || (urn.split("::")[2]?.split("$").pop() ?? "");
  return { kind: kindOf(type), type, urn };
}

/**
 * The error the engine takes for `error`: a partial failure (an error carrying the id and the
 * outputs of what was made) as `ErrorResourceInitFailed` in the status details, so the engine
 * records the resource and the next `pulumi up` finishes it; any other as its message alone.
 */
export function statusOf(error: unknown, inputs?: Properties): Partial<grpcTypes.StatusObject> & Error {
  const message = (error as Error | undefined)?.message ?? String(error);
  const failure = Object.assign(new Error(message), { code: grpc.status.UNKNOWN, details: message });
  const made = error as { id?: unknown; properties?: Properties } | undefined;
  if (typeof made?.id !== "string" || made.id === "" || !made.properties) return failure;
  const detail = new pb.ErrorResourceInitFailed();
  detail.setId(made.id);
  detail.setProperties(structOf(made.properties));
  if (inputs) detail.setInputs(structOf(inputs));
  detail.setReasonsList([message]);
  const packed = new Any();
  packed.pack(detail.serializeBinary(), "pulumirpc.ErrorResourceInitFailed");
  const status = new Status();
  status.setCode(grpc.status.UNKNOWN);
  status.setMessage(message);
  status.addDetails(packed);
  const metadata = new grpc.Metadata();
  metadata.add("grpc-status-details-bin", Buffer.from(status.serializeBinary()));
  return Object.assign(failure, { metadata });
}

/** The operations in flight, each with the way to end it early (Cancel). */
const inFlight = new Set<(error: Error) => void>();

/**
 * One unary method: runs `handle` and answers its value, or its error as {@link statusOf} shapes
 * it. Cancel ends it at once with an error saying so.
 */
function unary<Q, R>(
  handle: (request: Q) => Promise<R> | R,
  inputsOf?: (request: Q) => Properties,
): grpcTypes.handleUnaryCall<Q, R> {
  return (call, reply) => {
    let end: (error: Error) => void = () => undefined;
    const cancelled = new Promise<never>((_resolve, reject) => (end = reject));
    inFlight.add(end);
    Promise.race([Promise.resolve().then(() => handle(call.request)), cancelled])
      .then(
        (response) => reply(null, response),
        (error: unknown) => reply(statusOf(error, inputsOf?.(call.request))),
      )
      .finally(() => inFlight.delete(end));
  };
}

/** Why an operation ended on Cancel. */
const CANCELLED =
  "cancelled by the engine (the command was interrupted): the steps already done stay in the clusters, and the next pulumi up converges them";

/** The service's methods, for the schema `text` (with its facts). */
export function resourceProvider(
  text: string,
  facts: SchemaFacts = schemaFacts(text),
): grpcTypes.UntypedServiceImplementation {
  return {
    handshake: unary((request: pb.ProviderHandshakeRequest) => {
      reportToEngine(request.getEngineAddress());
      return new pb.ProviderHandshakeResponse()
        .setAcceptSecrets(true)
        .setAcceptResources(false)
        .setAcceptOutputs(false);
    }),
    attach: unary((request: { getAddress(): string }) => {
      reportToEngine(request.getAddress());
      return new Empty();
    }),
    getPluginInfo: unary(() => new PluginInfo().setVersion(facts.version)),
    getSchema: unary(() => new pb.GetSchemaResponse().setSchema(text)),
    // The provider takes no configuration of its own.
    checkConfig: unary((request: pb.CheckRequest) => new pb.CheckResponse().setInputs(request.getNews())),
    diffConfig: unary(() => new pb.DiffResponse().setChanges(pb.DiffResponse.DiffChanges.DIFF_NONE)),
    configure: unary(() =>
      new pb.ConfigureResponse().setAcceptsecrets(true).setSupportspreview(true).setAcceptresources(false),
    ),
    check: unary(async (request: pb.CheckRequest) => {
      const target = targetOf(request);
      const { inputs, failures } = await operations.check(
        target,
        plainOf(request.getOlds()),
        facts.conformInputs(target.type, plainOf(request.getNews())),
      );
      return new pb.CheckResponse()
        .setInputs(structOf(inputs))
        .setFailuresList(failures.map((f) => new pb.CheckFailure().setProperty(f.property).setReason(f.reason)));
    }),
    diff: unary(async (request: pb.DiffRequest) => {
      const answer = await operations.diff(
        targetOf(request),
        request.getId(),
        plainOf(request.getOlds()),
        plainOf(request.getNews()),
      );
      const response = new pb.DiffResponse()
        .setChanges(answer.changes ? pb.DiffResponse.DiffChanges.DIFF_SOME : pb.DiffResponse.DiffChanges.DIFF_NONE)
        .setReplacesList(answer.replaces)
        .setDiffsList(answer.diffs)
        .setDeletebeforereplace(answer.deleteBeforeReplace)
        .setHasdetaileddiff(true);
      for (const change of answer.detailedDiff) {
        const kind =
          change.kind === "update-replace" ? pb.PropertyDiff.Kind.UPDATE_REPLACE : pb.PropertyDiff.Kind.UPDATE;
        response
          .getDetaileddiffMap()
          .set(change.path, new pb.PropertyDiff().setKind(kind).setInputdiff(change.inputDiff));
      }
      return response;
    }),
    create: unary(
      async (request: pb.CreateRequest) => {
        const target = targetOf(request);
        const made = await operations.create(
          target,
          plainOf(request.getProperties()),
          { timeoutSeconds: request.getTimeout(), preview: request.getPreview() },
          facts.outputs[target.type] ?? [],
        );
        return new pb.CreateResponse().setId(made.id).setProperties(structOf(made.properties));
      },
      (request) => plainOf(request.getProperties()),
    ),
    read: unary(async (request: pb.ReadRequest) => {
      const found = await operations.read(
        targetOf(request),
        request.getId(),
        plainOf(request.getProperties()),
        plainOf(request.getInputs()),
      );
      return new pb.ReadResponse()
        .setId(found.id)
        .setProperties(structOf(found.properties))
        .setInputs(structOf(found.inputs));
    }),
    update: unary(
      async (request: pb.UpdateRequest) => {
        const updated = await operations.update(
          targetOf(request),
          request.getId(),
          plainOf(request.getOlds()),
          plainOf(request.getNews()),
          { timeoutSeconds: request.getTimeout(), preview: request.getPreview() },
        );
        return new pb.UpdateResponse().setProperties(structOf(updated.properties));
      },
      (request) => plainOf(request.getNews()),
    ),
    delete: unary(async (request: pb.DeleteRequest) => {
      await operations.remove(targetOf(request), request.getId(), plainOf(request.getProperties()), {
        timeoutSeconds: request.getTimeout(),
        preview: false,
      });
      return new Empty();
    }),
    // Not through `unary`: it would be in flight itself, and end itself.
    cancel: ((_call, reply) => {
      for (const end of inFlight) end(new Error(CANCELLED));
      reply(null, new Empty());
    }) satisfies grpcTypes.handleUnaryCall<unknown, emptyTypes.Empty>,
  };
}

/**
 * Serves the plugin on a free port of 127.0.0.1 and resolves to that port (the engine reads it
 * from the plugin's first line of stdout).
 */
export function serve(text: string): Promise<{ port: number; server: grpcTypes.Server }> {
  const server = new grpc.Server();
  server.addService(ResourceProviderService, resourceProvider(text));
  return new Promise((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, port) =>
      error ? reject(error) : resolve({ port, server }),
    ),
  );
}
