import { API_GROUP } from "../../../../core/api/names.js";
import { TENANT_RULES } from "../../../../core/authentication/tenant.js";
import { describeMissing, missingRights, refusalCause } from "../../../../core/offloading/provider-rights.js";

/** What a SelfSubjectRulesReview lists for an identity bound to the tenant Role, and the basic rights of everyone. */
const granted = [
  ...TENANT_RULES.map((rule) => ({ apiGroups: rule.apiGroups, resources: rule.resources, verbs: rule.verbs })),
  { apiGroups: ["authorization.k8s.io"], resources: ["selfsubjectrulesreviews"], verbs: ["create"] },
];

describe("missingRights", () => {
  test("GIVEN the tenant Role granted in full THEN nothing is missing", () => {
    expect(missingRights(TENANT_RULES, granted)).toEqual([]);
  });

  test("GIVEN a wildcard grant THEN nothing is missing", () => {
    expect(missingRights(TENANT_RULES, [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }])).toEqual([]);
  });

  test("GIVEN a Role cut of one kind (an earlier release's) THEN that kind's verbs are missing, and only those", () => {
    const cut = granted.map((rule) => ({
      ...rule,
      resources: (rule.resources ?? []).filter((r) => r !== "reflectedservices"),
    }));
    const missing = missingRights(TENANT_RULES, cut);
    expect(missing).toEqual([
      {
        resource: `reflectedservices.${API_GROUP}`,
        verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
      },
    ]);
    expect(describeMissing(missing)).toBe(
      `get, list, watch, create, update, patch, delete reflectedservices.${API_GROUP}`,
    );
  });

  test("GIVEN rights on named objects only, or in another group THEN they do not count", () => {
    const narrowed = [
      { apiGroups: [API_GROUP], resources: ["resourceoffers"], verbs: ["get", "list", "watch"], resourceNames: ["x"] },
      { apiGroups: ["other.example"], resources: ["resourceoffers"], verbs: ["*"] },
    ];
    expect(missingRights([TENANT_RULES[1]!], narrowed)).toEqual([
      { resource: `resourceoffers.${API_GROUP}`, verbs: ["get", "list", "watch"] },
    ]);
  });

  test("GIVEN what is missing THEN the cause names the identity, the rights and the namespace", () => {
    expect(
      refusalCause("bbbbbbbbbbbbbbbb", "pulumi-liqo-tenant-bbbbbbbbbbbbbbbb", [
        { resource: `offloadedpods.${API_GROUP}`, verbs: ["create"] },
      ]),
    ).toBe(
      `its identity pulumi-liqo:consumer:bbbbbbbbbbbbbbbb may not create offloadedpods.${API_GROUP} in ` +
        "pulumi-liqo-tenant-bbbbbbbbbbbbbbbb (the consumer's agent gets HTTP 403 Forbidden there)",
    );
  });
});
