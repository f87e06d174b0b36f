import {
  forgeRemoteNamespaceQuota,
  forgeTenantQuota,
  quotaCounted,
} from "../../../../provider/authentication/tenant-quota.js";

describe("consumer quotas", () => {
  test("GIVEN a consumer THEN its tenant namespace's quota counts each kind of the project it may create there", () => {
    const quota = forgeTenantQuota("0123456789abcdef");
    expect(quota.metadata?.namespace).toBe("pulumi-liqo-tenant-0123456789abcdef");
    expect(quota.spec?.hard).toEqual({
      "count/resourcerequests.peering.pulumi-liqo.dev": "4",
      "count/tunnelendpoints.peering.pulumi-liqo.dev": "4",
      "count/remotenamespaces.peering.pulumi-liqo.dev": "32",
      "count/offloadedpods.peering.pulumi-liqo.dev": "1024",
    });
  });

  test("GIVEN a remote namespace THEN its quota counts the ConfigMaps and Secrets the consumer keeps there", () => {
    const quota = forgeRemoteNamespaceQuota("shop", "0123456789abcdef");
    expect(quota.metadata?.namespace).toBe("shop");
    expect(quota.spec?.hard).toEqual({ "count/configmaps": "128", "count/secrets": "128" });
  });

  test("GIVEN a quota THEN it is counted only once the controller reported usage of every resource it limits", () => {
    const quota = forgeRemoteNamespaceQuota("shop", "0123456789abcdef");
    expect(quotaCounted(quota)).toBe(false);
    expect(quotaCounted({ ...quota, status: { used: { "count/configmaps": "1" } } })).toBe(false);
    expect(quotaCounted({ ...quota, status: { used: { "count/configmaps": "1", "count/secrets": "0" } } })).toBe(true);
  });
});
