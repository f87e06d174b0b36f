/**
 * Which namespaces an OffloadingSelector picks (labels only), what a selector input may be, the
 * name its object gets, and the placement binding that matches the same namespaces at admission.
 */
import type { V1Namespace } from "@kubernetes/client-node";
import { labelsMatch, selectedNamespaces, selectorFaults } from "../../../../core/offloading/namespace-selector.js";
import { selectorObjectName } from "../../../../core/offloading/offloading-selector.js";
import { forgePodPlacementBinding, podPlacementName } from "../../../../core/offloading/pod-placement.js";

const ns = (name: string, labels: Record<string, string> = {}, extra: Partial<V1Namespace> = {}): V1Namespace => ({
  metadata: { name, labels: { "kubernetes.io/metadata.name": name, ...labels } },
  ...extra,
});

describe("namespaces picked by a label selector", () => {
  test("GIVEN matchLabels and each operator WHEN matched THEN it holds as Kubernetes decides it", () => {
    const labels = { team: "shop", tier: "web" };
    expect(labelsMatch(labels, { matchLabels: { team: "shop" } })).toBe(true);
    expect(labelsMatch(labels, { matchLabels: { team: "shop", tier: "db" } })).toBe(false);
    expect(labelsMatch(labels, { matchExpressions: [{ key: "tier", operator: "In", values: ["web", "db"] }] })).toBe(
      true,
    );
    expect(labelsMatch(labels, { matchExpressions: [{ key: "tier", operator: "NotIn", values: ["web"] }] })).toBe(
      false,
    );
    // NotIn holds for a namespace without the label, as in Kubernetes.
    expect(labelsMatch({}, { matchExpressions: [{ key: "tier", operator: "NotIn", values: ["web"] }] })).toBe(true);
    expect(labelsMatch(labels, { matchExpressions: [{ key: "team", operator: "Exists" }] })).toBe(true);
    expect(labelsMatch(labels, { matchExpressions: [{ key: "team", operator: "DoesNotExist" }] })).toBe(false);
  });

  test("GIVEN labelled kube-system, the system namespace, a project-made namespace and one being deleted WHEN selected THEN none of them is", () => {
    const picked = selectedNamespaces(
      [
        ns("shop-2", { team: "shop" }),
        ns("shop-1", { team: "shop" }),
        ns("web"),
        ns("kube-system", { team: "shop" }),
        ns("kube-extra", { team: "shop" }),
        ns("pulumi-liqo-system", { team: "shop" }),
        ns("liqo-tenant-x", { team: "shop", "app.kubernetes.io/managed-by": "pulumi-liqo" }),
        ns("going", { team: "shop" }, { status: { phase: "Terminating" } }),
      ],
      { matchLabels: { team: "shop" } },
    );
    expect(picked).toEqual(["shop-1", "shop-2"]);
  });

  test("GIVEN selectors with faults WHEN checked THEN each fault names its field; an empty selector is refused", () => {
    expect(selectorFaults({ matchLabels: { team: "shop" } })).toEqual([]);
    expect(selectorFaults({ matchExpressions: [{ key: "team", operator: "Exists" }] })).toEqual([]);
    expect(selectorFaults({})).toEqual([
      "selects every namespace: give at least one label in matchLabels or matchExpressions",
    ]);
    expect(selectorFaults("team=shop")).toEqual(["must be an object with matchLabels and/or matchExpressions"]);
    expect(selectorFaults({ matchLabels: { "bad key!": "x", team: "not valid!" }, labels: {} })).toEqual([
      "labels: not a field of a label selector",
      'matchLabels["bad key!"]: not a valid label key',
      'matchLabels["team"]: "not valid!" is not a valid label value',
    ]);
    expect(
      selectorFaults({
        matchExpressions: [
          { key: "team", operator: "Equals", values: ["a"] },
          { key: "team", operator: "In" },
          { key: "team", operator: "Exists", values: ["a"] },
        ],
      }),
    ).toEqual([
      'matchExpressions[0].operator: must be In, NotIn, Exists, DoesNotExist, not "Equals"',
      "matchExpressions[1].values: In needs at least one value",
      "matchExpressions[2].values: Exists takes no values",
    ]);
  });

  test("GIVEN two stacks' resources of one name WHEN their selectors are named THEN the names are DNS labels and differ", () => {
    const one = selectorObjectName("urn:pulumi:dev::infra::pulumi-nodejs:dynamic:Resource::Shop Teams");
    const two = selectorObjectName("urn:pulumi:prod::infra::pulumi-nodejs:dynamic:Resource::Shop Teams");
    expect(one).toMatch(/^shop-teams-[0-9a-f]{8}$/);
    expect(two).not.toBe(one);
    expect(selectorObjectName("urn:pulumi:dev::infra::x::___")).toMatch(/^selector-[0-9a-f]{8}$/);
  });

  test(
    "GIVEN a selector's scope WHEN its placement binding is forged THEN it matches the selector's labels " +
      "and never kube-* or the project's namespaces",
    () => {
      const scope = { selector: "teams-1", namespaceSelector: { matchLabels: { team: "shop" } } };
      expect(podPlacementName(scope)).toBe("pulumi-liqo-pods-selected-by-teams-1");
      expect(forgePodPlacementBinding(scope)).toMatchObject({
        metadata: { labels: { "peering.pulumi-liqo.dev/selected-by": "teams-1" } },
        spec: {
          policyName: "pulumi-liqo-pods-selected-by-teams-1",
          matchResources: {
            namespaceSelector: {
              matchLabels: { team: "shop" },
              matchExpressions: [
                {
                  key: "kubernetes.io/metadata.name",
                  operator: "NotIn",
                  values: ["kube-system", "kube-public", "kube-node-lease"],
                },
                { key: "app.kubernetes.io/managed-by", operator: "NotIn", values: ["pulumi-liqo"] },
              ],
            },
          },
        },
      });
    },
  );
});
