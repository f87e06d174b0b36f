/** A Peering whose create failed half-way: the next preview is an update that finishes the create, never a replacement. */
import { forgeKubeconfig } from "../../../../core/kube/kubeconfig.js";
import { INCOMPLETE } from "../../../../core/resources/partial.js";
import {
  peeringChanges,
  pulumiProvider as peering,
  type PeeringInputs,
  type PeeringOutputs,
} from "../../../../core/resources/peering.js";

const kubeconfig = forgeKubeconfig({
  name: "b",
  server: "https://10.0.0.2:6443",
  caPem: "ca",
  certPem: "cert",
  keyPem: "key",
});
const handover = {
  clusterId: "00000000000000aa",
  authUrl: "https://198.51.100.2:8443",
  authCaCert: "auth-ca",
  token: "plt_0123456789abcdef_secret0",
};
const inputs: PeeringInputs = {
  consumerKubeconfig: kubeconfig,
  consumerClusterId: "00000000000000bb",
  provider: handover,
  resources: { cpu: "2", memory: "4Gi", pods: 20 },
  timeoutSeconds: 120,
};

/** What the Peering shim records when create throws: the inputs without the token, and no record of the peering. */
function leftByFailedCreate(news: PeeringInputs): PeeringOutputs {
  const { token: _token, ...provider } = news.provider;
  return { ...news, provider, status: INCOMPLETE };
}

describe("a retried create of a Peering", () => {
  test(
    "GIVEN a create that failed before the node was named WHEN previewed again with the same inputs THEN it is an update " +
      "(status), not a replacement",
    async () => {
      const olds = leftByFailedCreate(inputs);
      expect(peeringChanges(olds, inputs)).toEqual({ changed: ["status"], replaces: [], unknown: [] });
      expect(await peering.diff!("00000000000000bb-to-00000000000000aa", olds, inputs)).toEqual({
        changes: true,
        replaces: [],
        deleteBeforeReplace: true,
      });
    },
  );

  test("GIVEN a failed create with a virtualNodeName given WHEN previewed with the same name THEN no replacement; with another name THEN it replaces", () => {
    const named = { ...inputs, virtualNodeName: "liqo-far" };
    const olds = leftByFailedCreate(named);
    expect(peeringChanges(olds, named).replaces).toEqual([]);
    expect(peeringChanges(olds, { ...named, virtualNodeName: "liqo-near" }).replaces).toEqual(["virtualNodeName"]);
  });

  test("GIVEN a peering that was created WHEN the default node name resolves to the recorded one THEN nothing changes", () => {
    const olds: PeeringOutputs = {
      ...leftByFailedCreate(inputs),
      providerClusterName: "a",
      virtualNodeName: "liqo-a",
      status: "Ready",
    };
    expect(peeringChanges(olds, inputs).changed).toEqual([]);
  });
});
