/** What a TunnelEndpoint may claim: its origin, one tunnel per tenant, the derived link block, remote ranges remapped. */
import {
  REMOTE_CLUSTER_LABEL,
  SYSTEM_NAMESPACE,
  tenantNamespace,
  type TunnelEndpoint,
  type TunnelEndpointSpec,
} from "../../../../core/api/index.js";
import { Cidr } from "../../../../core/net/cidr.js";
import {
  checkEndpointClaims,
  decideRemoteView,
  endpointOrigin,
  NOT_PRIVATE_SPACE,
  PRIVATE_SPACE,
  refusalMessage,
  servedPortClash,
  type AcceptedClaims,
  type ClaimsVerdict,
  type EndpointOrigin,
} from "../../../../core/network-fabric/claims.js";
import { tunnelEndpointName, tunnelLinkCidr } from "../../../../core/network-fabric/tunnel-plan.js";

const A = "00000000000000aa"; // the local cluster: provider
const B = "00000000000000bb"; // a consumer of a
const C = "00000000000000cc"; // another cluster
const tenantB: EndpointOrigin = { kind: "tenant", consumerClusterId: B };

/** The spec b's peering writes on a, with `overrides`. */
function specFromB(overrides: Partial<TunnelEndpointSpec> = {}): TunnelEndpointSpec {
  return {
    remoteClusterId: B,
    remoteClusterName: "b",
    role: "server",
    listenPort: 51820,
    mtu: 1420,
    keepaliveSeconds: 0,
    linkCidr: tunnelLinkCidr(B, A).toString(),
    remote: { publicKey: "k", podCidr: "10.101.0.0/16" },
    ...overrides,
  };
}

const inTenantB = (spec: TunnelEndpointSpec, name = tunnelEndpointName(B)) => ({
  metadata: { name, namespace: tenantNamespace(B) },
  spec,
});

function refusal(verdict: ClaimsVerdict): { field: string; reason: string } {
  if (verdict.accepted) throw new Error(`expected a refusal, got ${JSON.stringify(verdict)}`);
  return { field: verdict.field, reason: verdict.reason };
}

describe("endpoint origin", () => {
  test(
    "GIVEN the system namespace, a tenant namespace and look-alikes WHEN told apart THEN only a namespace named for the " +
      "consumer its label names is a tenant",
    () => {
      expect(endpointOrigin(SYSTEM_NAMESPACE, undefined)).toEqual({ kind: "system" });
      expect(endpointOrigin(tenantNamespace(B), { [REMOTE_CLUSTER_LABEL]: B })).toEqual(tenantB);
      // The label names another consumer than the name does, or is missing: served as nobody's.
      expect(endpointOrigin(tenantNamespace(B), { [REMOTE_CLUSTER_LABEL]: C })).toEqual({ kind: "other" });
      expect(endpointOrigin(tenantNamespace(B), undefined)).toEqual({ kind: "other" });
      expect(endpointOrigin("default", { [REMOTE_CLUSTER_LABEL]: B })).toEqual({ kind: "other" });
    },
  );
});

describe("endpoint claims", () => {
  test("GIVEN the spec b's peering writes WHEN checked on a THEN it is accepted with the derived link block and the remote's ranges parsed", () => {
    expect(
      checkEndpointClaims(
        inTenantB(specFromB({ remote: { podCidr: "10.101.0.0/16", externalCidr: "10.220.0.0/24" } })),
        tenantB,
        A,
      ),
    ).toEqual({
      accepted: true,
      link: tunnelLinkCidr(B, A),
      remotePodCidr: Cidr.parse("10.101.0.0/16"),
      remoteExternalCidr: Cidr.parse("10.220.0.0/24"),
    });
    // Before b's gateway has answered, there is no pod CIDR yet: accepted, nothing to remap.
    expect(checkEndpointClaims(inTenantB(specFromB({ remote: {} })), tenantB, A)).toEqual({
      accepted: true,
      link: tunnelLinkCidr(B, A),
    });
  });

  test("GIVEN a tenant endpoint with another name WHEN checked THEN it is refused naming metadata.name and the one name allowed", () => {
    for (const name of ["extra-1", tunnelEndpointName(C), tunnelEndpointName(A)]) {
      expect(refusal(checkEndpointClaims(inTenantB(specFromB(), name), tenantB, A))).toEqual({
        field: "metadata.name",
        reason: expect.stringContaining(
          `the only tunnel consumer ${B} may ask for in ${tenantNamespace(B)} is its peering's, named ${tunnelEndpointName(B)}`,
        ),
      });
    }
  });

  test("GIVEN a tenant endpoint with the right name toward another cluster WHEN checked THEN it is refused naming spec.remoteClusterId", () => {
    expect(refusal(checkEndpointClaims(inTenantB(specFromB({ remoteClusterId: C })), tenantB, A))).toEqual({
      field: "spec.remoteClusterId",
      reason: `"${C}": a tunnel in ${tenantNamespace(B)} goes to its consumer ${B}, and to no other cluster`,
    });
  });

  test(
    "GIVEN a tenant endpoint asking its gateway to serve the cluster's API server and auth service inside the tunnel " +
      "WHEN checked THEN it is refused naming spec.inBandPorts; the same ask from the system namespace is accepted",
    () => {
      const inBandPorts = { apiServer: 6443, auth: 8443 };
      expect(refusal(checkEndpointClaims(inTenantB(specFromB({ inBandPorts })), tenantB, A))).toEqual({
        field: "spec.inBandPorts",
        reason: expect.stringContaining(`a tunnel in ${tenantNamespace(B)} carries pod traffic only`),
      });
      const system = {
        metadata: { name: tunnelEndpointName(B), namespace: SYSTEM_NAMESPACE },
        spec: specFromB({ inBandPorts }),
      };
      expect(checkEndpointClaims(system, { kind: "system" }, A).accepted).toBe(true);
    },
  );

  test(
    "GIVEN a tenant endpoint asking its gateway to serve the cluster's API server to the consumer's pods " +
      "WHEN checked THEN it is refused naming spec.podApiPort (only a cluster's admin opens its own API server to its peer)",
    () => {
      expect(refusal(checkEndpointClaims(inTenantB(specFromB({ podApiPort: 6443 })), tenantB, A))).toEqual({
        field: "spec.podApiPort",
        reason: expect.stringContaining(`a tunnel in ${tenantNamespace(B)} carries pod traffic only`),
      });
      const system = {
        metadata: { name: tunnelEndpointName(B), namespace: SYSTEM_NAMESPACE },
        spec: specFromB({ podApiPort: 6443 }),
      };
      expect(checkEndpointClaims(system, { kind: "system" }, A).accepted).toBe(true);
    },
  );

  test(
    "GIVEN a tenant's link block that is another address, inside the local pod CIDR, the other direction's, or not a CIDR " +
      "WHEN checked THEN it is refused naming spec.linkCidr and the derived block",
    () => {
      const derived = tunnelLinkCidr(B, A).toString();
      for (const linkCidr of ["172.29.1.12/30", "10.100.0.8/30", tunnelLinkCidr(A, B).toString()]) {
        expect(refusal(checkEndpointClaims(inTenantB(specFromB({ linkCidr })), tenantB, A))).toEqual({
          field: "spec.linkCidr",
          reason: `"${linkCidr}" is not the link block derived from the peering's cluster ids (${derived})`,
        });
      }
      expect(refusal(checkEndpointClaims(inTenantB(specFromB({ linkCidr: "172.29.1.13/30" })), tenantB, A))).toEqual({
        field: "spec.linkCidr",
        reason: expect.stringMatching(/^"172.29.1.13\/30" is not an IPv4 CIDR \(.*host bits are set/),
      });
    },
  );

  test("GIVEN a system endpoint WHEN checked THEN the link block of either direction is accepted and any other refused", () => {
    const system = (linkCidr: string) => ({
      metadata: { name: tunnelEndpointName(B), namespace: SYSTEM_NAMESPACE },
      spec: specFromB({ linkCidr }),
    });
    expect(checkEndpointClaims(system(tunnelLinkCidr(A, B).toString()), { kind: "system" }, A).accepted).toBe(true);
    expect(checkEndpointClaims(system(tunnelLinkCidr(B, A).toString()), { kind: "system" }, A).accepted).toBe(true);
    expect(refusal(checkEndpointClaims(system("169.254.0.0/30"), { kind: "system" }, A)).field).toBe("spec.linkCidr");
  });

  test("GIVEN an endpoint in a namespace that is neither system nor tenant WHEN checked THEN it is refused naming metadata.namespace", () => {
    const verdict = checkEndpointClaims(
      { metadata: { name: tunnelEndpointName(B), namespace: "default" }, spec: specFromB() },
      { kind: "other" },
      A,
    );
    expect(refusal(verdict)).toEqual({
      field: "metadata.namespace",
      reason: expect.stringContaining(`"default" is neither ${SYSTEM_NAMESPACE} nor a consumer's tenant namespace`),
    });
    expect(refusalMessage(verdict as never)).toMatch(/^refused metadata\.namespace: "default" is neither/);
  });

  test("GIVEN remote ranges that are not CIDRs or overlap each other WHEN checked THEN it is refused naming the range's field", () => {
    expect(
      refusal(checkEndpointClaims(inTenantB(specFromB({ remote: { podCidr: "everything" } })), tenantB, A)).field,
    ).toBe("spec.remote.podCidr");
    expect(
      refusal(
        checkEndpointClaims(
          inTenantB(specFromB({ remote: { podCidr: "10.101.0.0/16", externalCidr: "10.101.4.0/24" } })),
          tenantB,
          A,
        ),
      ),
    ).toEqual({
      field: "spec.remote.externalCidr",
      reason: expect.stringContaining("10.101.4.0/24 overlaps the remote pod CIDR 10.101.0.0/16"),
    });
  });

  test("GIVEN a very long hostile value WHEN refused THEN the reason quotes it cut short", () => {
    const reason = refusal(checkEndpointClaims(inTenantB(specFromB(), "x".repeat(200)), tenantB, A)).reason;
    expect(reason.length).toBeLessThan(250);
    expect(reason).toContain(`"${"x".repeat(76)}..."`);
  });
});

describe("remote view of accepted claims", () => {
  const local = {
    podCidr: Cidr.parse("10.100.0.0/16"),
    taken: [Cidr.parse("10.96.0.0/16"), Cidr.parse("172.29.1.0/24")],
  };
  const claims = (podCidr: string, externalCidr?: string): AcceptedClaims => ({
    accepted: true,
    link: tunnelLinkCidr(B, A),
    remotePodCidr: Cidr.parse(podCidr),
    ...(externalCidr ? { remoteExternalCidr: Cidr.parse(externalCidr) } : {}),
  });
  const viewOf = (c: AcceptedClaims) => {
    const decided = decideRemoteView(c, local);
    if (!decided.accepted || !decided.view) throw new Error(`expected a view, got ${JSON.stringify(decided)}`);
    return decided.view;
  };

  test("GIVEN a private remote range clear of everything local WHEN decided THEN it is seen as is", () => {
    expect(viewOf(claims("10.101.0.0/16")).remotePodCidrAsSeen.toString()).toBe("10.101.0.0/16");
  });

  test(
    "GIVEN remote ranges on a host route, the local pod CIDR, the link blocks or the public internet WHEN decided THEN " +
      "each is seen remapped into the pool",
    () => {
      for (const claimed of [
        "172.29.1.0/24",
        "10.100.0.0/16",
        "169.254.0.0/16",
        "169.254.169.0/24",
        "8.8.8.0/24",
        "127.0.0.0/16",
      ]) {
        const view = viewOf(claims(claimed));
        expect(view.remapped).toBe(true);
        expect(Cidr.parse("10.64.0.0/10").overlaps(view.remotePodCidrAsSeen)).toBe(true);
        for (const t of [local.podCidr, ...local.taken]) expect(view.remotePodCidrAsSeen.overlaps(t)).toBe(false);
      }
    },
  );

  test("GIVEN a remote range too wide to remap WHEN decided THEN it is refused naming the range's field", () => {
    expect(decideRemoteView(claims("0.0.0.0/1"), local)).toEqual({
      accepted: false,
      field: "spec.remote.podCidr",
      reason: expect.stringContaining("cannot remap the remote pod CIDR 0.0.0.0/1"),
    });
    expect(decideRemoteView(claims("10.101.0.0/16", "11.0.0.0/8"), local)).toEqual({
      accepted: false,
      field: "spec.remote.externalCidr",
      reason: expect.stringContaining("cannot remap the remote external CIDR 11.0.0.0/8"),
    });
  });

  test("GIVEN no remote pod CIDR yet WHEN decided THEN there is no view", () => {
    expect(decideRemoteView({ accepted: true, link: tunnelLinkCidr(B, A) }, local)).toEqual({
      accepted: true,
      view: undefined,
    });
  });

  test("GIVEN the address space WHEN split THEN private and not-private space cover it exactly, without overlap", () => {
    const all = [...PRIVATE_SPACE, ...NOT_PRIVATE_SPACE];
    expect(all.reduce((sum, c) => sum + c.size, 0)).toBe(2 ** 32);
    for (const p of PRIVATE_SPACE) for (const n of NOT_PRIVATE_SPACE) expect(p.overlaps(n)).toBe(false);
    expect(NOT_PRIVATE_SPACE.length).toBeLessThan(40);
  });
});

describe("served ports", () => {
  const served = (
    uid: string,
    spec: TunnelEndpointSpec,
    extra: Partial<TunnelEndpoint["metadata"]> = {},
    up = true,
  ): TunnelEndpoint =>
    ({
      metadata: { uid, name: `to-${spec.remoteClusterId}`, namespace: SYSTEM_NAMESPACE, ...extra },
      spec,
      ...(up ? { status: { interfaceName: "lqwg-x" } } : {}),
    }) as TunnelEndpoint;
  const holder = served("1", specFromB({ remoteClusterId: C, remoteClusterName: "c" }));

  test("GIVEN a port another served tunnel holds WHEN a second server endpoint asks for it THEN it is refused, naming the port and the holder", () => {
    const clash = servedPortClash(served("2", specFromB(), {}, false), [holder]);
    expect(clash).toEqual({
      accepted: false,
      field: "spec.listenPort",
      reason: expect.stringContaining('UDP port 51820 is already served on this gateway by the tunnel to "c"'),
    });
  });

  test("GIVEN a holder that is going, not yet up, a client, or on another port WHEN a server endpoint asks THEN nothing clashes", () => {
    const asking = served("2", specFromB(), {}, false);
    expect(servedPortClash(asking, [served("1", holder.spec, { deletionTimestamp: new Date() })])).toBeUndefined();
    expect(servedPortClash(asking, [served("1", holder.spec, {}, false)])).toBeUndefined();
    expect(servedPortClash(asking, [served("1", { ...holder.spec, role: "client" })])).toBeUndefined();
    expect(servedPortClash(asking, [served("1", { ...holder.spec, listenPort: 51821 })])).toBeUndefined();
    expect(servedPortClash(served("2", { ...specFromB(), role: "client" }), [holder])).toBeUndefined();
    expect(servedPortClash(holder, [holder])).toBeUndefined();
  });
});
