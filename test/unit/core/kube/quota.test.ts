import { forgeObjectCountQuota, quotaCounted, quotaLeftUncounted } from "../../../../core/kube/quota.js";
import { forgeSystemQuota, forgeTenantQuota } from "../../../../core/authentication/tenant-quota.js";

describe("object-count quotas", () => {
  const quota = forgeObjectCountQuota({
    namespace: "shop",
    name: "q",
    labels: {},
    group: "example.dev",
    limits: { widgets: 3, gadgets: 2 },
  });

  test("GIVEN limits of a group THEN each is a count key of that group; a core kind's key has none", () => {
    expect(quota.spec?.hard).toEqual({ "count/widgets.example.dev": "3", "count/gadgets.example.dev": "2" });
    const core = forgeObjectCountQuota({ namespace: "n", name: "q", labels: {}, group: "", limits: { secrets: 1 } });
    expect(core.spec?.hard).toEqual({ "count/secrets": "1" });
  });

  test("GIVEN a quota THEN it is counted only once the controller reported usage of every resource it limits", () => {
    expect(quotaCounted(quota)).toBe(false);
    expect(quotaCounted({ ...quota, status: { used: { "count/widgets.example.dev": "1" } } })).toBe(false);
    expect(
      quotaCounted({
        ...quota,
        status: { used: { "count/widgets.example.dev": "1", "count/gadgets.example.dev": "0" } },
      }),
    ).toBe(true);
  });

  test("GIVEN a quota the controller has not processed yet THEN it is not 'left uncounted': the controller will count it", () => {
    expect(quotaLeftUncounted(quota)).toBe(false);
    expect(quotaLeftUncounted({ ...quota, status: { hard: { "count/widgets.example.dev": "3" }, used: {} } })).toBe(
      false,
    );
  });

  test("GIVEN a quota processed with a kind uncounted THEN it is left uncounted; counted, it is not", () => {
    const processed = { hard: { ...quota.spec!.hard } };
    expect(quotaLeftUncounted({ ...quota, status: { ...processed, used: { "count/widgets.example.dev": "0" } } })).toBe(
      true,
    );
    expect(
      quotaLeftUncounted({
        ...quota,
        status: { ...processed, used: { "count/widgets.example.dev": "0", "count/gadgets.example.dev": "0" } },
      }),
    ).toBe(false);
  });

  test("GIVEN a consumer THEN its tenant namespace's quota counts each kind of the project it may create there", () => {
    const tenant = forgeTenantQuota("0123456789abcdef");
    expect(tenant.metadata?.namespace).toBe("pulumi-liqo-tenant-0123456789abcdef");
    expect(tenant.metadata?.name).toBe("pulumi-liqo-consumer");
    expect(tenant.spec?.hard).toEqual({
      "count/resourcerequests.peering.pulumi-liqo.dev": "4",
      "count/tunnelendpoints.peering.pulumi-liqo.dev": "4",
      "count/remotenamespaces.peering.pulumi-liqo.dev": "32",
      "count/offloadedpods.peering.pulumi-liqo.dev": "1024",
      "count/reflectedservices.peering.pulumi-liqo.dev": "256",
      "count/reflectedclaims.peering.pulumi-liqo.dev": "256",
    });
    expect(Object.keys(forgeSystemQuota().spec!.hard!).sort()).toEqual(Object.keys(tenant.spec!.hard!).sort());
  });
});
