import { forgeRemoteNamespaceQuota } from "../../../../core/offloading/remote-namespace-quota.js";

describe("remote namespace quota", () => {
  test("GIVEN a remote namespace THEN its quota counts the ConfigMaps and Secrets the consumer keeps there", () => {
    const quota = forgeRemoteNamespaceQuota("shop", "0123456789abcdef");
    expect(quota.metadata?.namespace).toBe("shop");
    expect(quota.metadata?.name).toBe("pulumi-liqo-consumer");
    expect(quota.spec?.hard).toEqual({ "count/configmaps": "128", "count/secrets": "1152" });
  });
});
