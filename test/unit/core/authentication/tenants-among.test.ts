import type * as k8s from "@kubernetes/client-node";
import { MANAGED_BY, MANAGED_BY_LABEL, REMOTE_CLUSTER_LABEL, tenantNamespace } from "../../../../core/api/names.js";
import { tenantsAmong } from "../../../../core/authentication/tenant.js";

const namespace = (name: string, labels: Record<string, string>): k8s.V1Namespace => ({ metadata: { name, labels } });
const ours = (consumer: string): Record<string, string> => ({
  [MANAGED_BY_LABEL]: MANAGED_BY,
  [REMOTE_CLUSTER_LABEL]: consumer,
});

describe("tenantsAmong", () => {
  test("GIVEN tenant namespaces of two consumers THEN both are tenants, in order", () => {
    expect(
      tenantsAmong([
        namespace(tenantNamespace("bbbbbbbbbbbbbbbb"), ours("bbbbbbbbbbbbbbbb")),
        namespace(tenantNamespace("aaaaaaaaaaaaaaaa"), ours("aaaaaaaaaaaaaaaa")),
      ]),
    ).toEqual(["aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"]);
  });

  test(
    "GIVEN namespaces that only look like tenants (labelled for another consumer than their name, labelled by " +
      "someone else, named like one without labels, an offloaded namespace of a consumer) THEN none is a tenant",
    () => {
      expect(
        tenantsAmong([
          namespace(tenantNamespace("aaaaaaaaaaaaaaaa"), ours("cccccccccccccccc")),
          namespace(tenantNamespace("aaaaaaaaaaaaaaaa"), { ...ours("aaaaaaaaaaaaaaaa"), [MANAGED_BY_LABEL]: "helm" }),
          namespace(tenantNamespace("dddddddddddddddd"), {}),
          namespace("shop-aaaaaaaaaaaaaaaa", ours("aaaaaaaaaaaaaaaa")),
        ]),
      ).toEqual([]);
    },
  );
});
