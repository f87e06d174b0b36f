import { offloadingStatus } from "../../../../core/offloading/namespace-offloading.js";
import {
  offloadingLeftOnProvider,
  offloadingLeftRemedy,
  type UnreachableOffloadingProvider,
} from "../../../../core/offloading/provider-reach.js";
import { providerUnreachableError } from "../../../../core/operation/unreachable.js";

const gone: UnreachableOffloadingProvider = {
  step: "offloading",
  providerName: "a",
  endpoint: "API server https://10.0.0.1:6443",
  cause: "connection refused (nothing listens at that address and port; ECONNREFUSED)",
  virtualNode: "liqo-a",
  tenantNamespace: "pulumi-liqo-tenant-b1",
};

describe("what a forced offloading delete leaves on a provider it cannot reach", () => {
  test(
    "GIVEN pods that ran there WHEN listed " +
      "THEN the remote namespace with its request, the reflected objects and those pods with their requests are named",
    () => {
      expect(offloadingLeftOnProvider(gone, "cart-b1", ["cart/web-1", "cart/web-2"])).toEqual([
        "namespace cart-b1 and the RemoteNamespace pulumi-liqo-tenant-b1/cart-b1 that asked for it",
        "the ConfigMaps and Secrets reflected into cart-b1 (labelled peering.pulumi-liqo.dev/reflected=true)",
        "the pods offloaded there (cart/web-1, cart/web-2) and their OffloadedPods in pulumi-liqo-tenant-b1",
      ]);
    },
  );

  test("GIVEN no pod on the virtual node WHEN listed THEN it says none was known here, and still names what may be there", () => {
    expect(offloadingLeftOnProvider(gone, "shop-b1", []).at(-1)).toBe(
      "any pod offloaded there (none was on the virtual node here) and its OffloadedPod in pulumi-liqo-tenant-b1",
    );
  });

  test("GIVEN what stays WHEN the remedy is said THEN it names the object whose delete makes the provider's agent remove it all", () => {
    expect(offloadingLeftRemedy(gone, "shop-b1")).toContain(
      "deleting RemoteNamespace pulumi-liqo-tenant-b1/shop-b1 there",
    );
  });
});

describe("an offloading's status with a provider out of reach", () => {
  test("GIVEN one of two providers unreachable WHEN refresh records it THEN it leads with where and why, then what the agent said of the other", () => {
    const reports = [
      { virtualNode: "liqo-a", remoteNamespace: "shop-b1", phase: "Unreachable" as const, message: "stale" },
      {
        virtualNode: "liqo-c",
        remoteNamespace: "shop-b1",
        phase: "Pending" as const,
        message: "waiting for provider c to answer",
      },
    ];
    expect(offloadingStatus(reports, ["liqo-a", "liqo-c"], [gone])).toBe(
      "provider a is unreachable: API server https://10.0.0.1:6443: connection refused (nothing listens at that address and port; ECONNREFUSED); " +
        "virtual node liqo-c: Pending: waiting for provider c to answer",
    );
  });

  test("GIVEN every provider reachable and Ready WHEN refresh records it THEN it is Ready", () => {
    const reports = [{ virtualNode: "liqo-a", remoteNamespace: "shop-b1", phase: "Ready" as const }];
    expect(offloadingStatus(reports, ["liqo-a"], [])).toBe("Ready");
  });
});

describe("the error of an offloading whose providers cannot be reached", () => {
  test("GIVEN two providers gone WHEN the delete refuses THEN it names both, says nothing changed, and names force on the NamespaceOffloading", () => {
    const other = { ...gone, providerName: "c", endpoint: "API server https://10.0.0.3:6443", cause: "timed out (…)" };
    const message = providerUnreachableError([gone, other], "NamespaceOffloading").message;
    expect(message).toMatch(
      /^offloading: provider a is unreachable: API server https:\/\/10\.0\.0\.1:6443: connection refused \(/,
    );
    expect(message).toContain(
      "; provider c is unreachable: API server https://10.0.0.3:6443: timed out (…). Nothing was changed. ",
    );
    expect(message).toContain("set force: true on the NamespaceOffloading");
  });
});
