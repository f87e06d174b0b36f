import { clusterEndpointsOf, removalOf } from "../../../../core/cluster/install-plan.js";

describe("clusterEndpointsOf", () => {
  test("GIVEN nothing but the kubeconfig's server WHEN resolved THEN every endpoint is on its host, at the default ports", () => {
    expect(clusterEndpointsOf({}, "https://10.0.0.1:6443")).toEqual({
      apiServerUrl: "https://10.0.0.1:6443",
      authHost: "10.0.0.1",
      authUrl: "https://10.0.0.1:8443",
      gatewayEndpoint: "10.0.0.1:51820",
    });
  });

  test("GIVEN an API server URL, addresses and ports WHEN resolved THEN each given one wins over the kubeconfig's", () => {
    const asked = {
      apiServerUrl: "https://api.example.org:443",
      authService: { address: "auth.example.org", port: 9443 },
      gateway: { port: 51821 },
    };
    expect(clusterEndpointsOf(asked, "https://127.0.0.1:6443")).toEqual({
      apiServerUrl: "https://api.example.org:443",
      authHost: "auth.example.org",
      authUrl: "https://auth.example.org:9443",
      gatewayEndpoint: "api.example.org:51821",
    });
  });
});

describe("removalOf", () => {
  const mine = "urn:pulumi:dev::p::pulumi-nodejs:dynamic:Resource::a";
  const theirs = "urn:pulumi:other::q::pulumi-nodejs:dynamic:Resource::a";

  test("GIVEN an install that is this resource's and no peering WHEN deleted THEN it is uninstalled", () => {
    expect(removalOf({ holder: mine, owner: mine, users: [], force: false })).toEqual({ kind: "uninstall" });
  });

  test("GIVEN another resource's install WHEN deleted THEN it is only forgotten, whatever uses it or force says", () => {
    for (const force of [false, true])
      expect(removalOf({ holder: theirs, owner: mine, users: ["p"], force })).toEqual({
        kind: "forget",
        holder: theirs,
      });
  });

  test("GIVEN peerings that use the cluster WHEN deleted without force THEN it is refused, naming them; with force it is uninstalled", () => {
    const facts = { holder: mine, owner: mine, users: ["b-to-a", "c-to-a"] };
    expect(removalOf({ ...facts, force: false })).toEqual({ kind: "refuse", users: ["b-to-a", "c-to-a"] });
    expect(removalOf({ ...facts, force: true })).toEqual({ kind: "uninstall" });
  });

  test("GIVEN an install whose holder or owner is not known (older state) WHEN deleted THEN it is uninstalled", () => {
    expect(removalOf({ holder: undefined, owner: mine, users: [], force: false })).toEqual({ kind: "uninstall" });
    expect(removalOf({ holder: theirs, owner: undefined, users: [], force: false })).toEqual({ kind: "uninstall" });
  });
});
