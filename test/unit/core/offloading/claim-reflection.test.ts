import type { V1PersistentVolumeClaim, V1StorageClass } from "@kubernetes/client-node";
import { OFFLOADED_STORAGE_CLASS, OFFLOADED_VOLUME_PROVISIONER } from "../../../../core/api/offloading.js";
import {
  claimRequestOf,
  forgeHeldClaim,
  forgeOffloadedVolume,
  isHeldClaimOf,
  offeredStorageOf,
  refuseClaimRequest,
  refuseUnheldClaims,
} from "../../../../core/offloading/claim-reflection.js";

const claim: V1PersistentVolumeClaim = {
  metadata: { name: "data-db-0", namespace: "shop", uid: "u-1" },
  spec: {
    storageClassName: OFFLOADED_STORAGE_CLASS,
    accessModes: ["ReadWriteOnce"],
    resources: { requests: { storage: "1Gi" } },
  },
};
const offered = { storageClass: "local-path", accessModes: ["ReadWriteOnce", "ReadWriteOncePod"] };

const storageClass = (name: string, isDefault: boolean, provisioner = "rancher.io/local-path"): V1StorageClass => ({
  metadata: {
    name,
    creationTimestamp: new Date(`2026-11-0${name.length % 9}T00:00:00Z`),
    ...(isDefault ? { annotations: { "storageclass.kubernetes.io/is-default-class": "true" } } : {}),
  },
  provisioner,
});

describe("what a consumer asks a provider for a claim", () => {
  test("GIVEN a claim of the offloaded class THEN its name, size, modes and mode are asked, nothing else", () => {
    expect(claimRequestOf(claim)).toEqual({ name: "data-db-0", storage: "1Gi", accessModes: ["ReadWriteOnce"] });
  });

  test.each([["selector"], ["dataSource"], ["dataSourceRef"]] as const)(
    "GIVEN a claim with %s THEN it is not served, naming the field",
    (field) => {
      const asked = { ...claim, spec: { ...claim.spec, [field]: { name: "snapshot", kind: "VolumeSnapshot" } } };
      expect(claimRequestOf(asked)).toEqual({
        reason: "ClaimNotServed",
        message: expect.stringContaining(`spec.${field} is set`),
      });
    },
  );
});

describe("what a provider holds", () => {
  test("GIVEN a request of a size and a mode it serves THEN it holds it", () => {
    expect(refuseClaimRequest({ name: "data-db-0", storage: "1Gi", accessModes: ["ReadWriteOnce"] }, offered)).toBe(
      undefined,
    );
  });

  test.each([
    [{ name: "data-db-0", storage: "1Gi", accessModes: ["ReadWriteMany"] }, "AccessModeRefused", "ReadWriteMany"],
    [{ name: "Not A Name", storage: "1Gi", accessModes: ["ReadWriteOnce"] }, "Invalid", "claim.name"],
    [{ name: "d", storage: "-1Gi", accessModes: ["ReadWriteOnce"] }, "Invalid", "storage"],
    [{ name: "d", storage: "lots", accessModes: ["ReadWriteOnce"] }, "Invalid", "storage"],
    [{ name: "d", storage: "1Gi", accessModes: [] }, "Invalid", "accessModes"],
    [{ name: "d", storage: "1Gi", accessModes: ["ReadEverything"] }, "Invalid", "accessModes"],
    [{ name: "d", storage: "1Gi", accessModes: ["ReadWriteOnce"], volumeMode: "Raw" }, "Invalid", "volumeMode"],
    [null, "Invalid", "claim.name"],
  ])("GIVEN %j THEN it is refused (%s) naming %s", (request, reason, named) => {
    expect(refuseClaimRequest(request, offered)).toEqual({ reason, message: expect.stringContaining(named) });
  });

  test("GIVEN no default StorageClass THEN a claim is refused, saying so", () => {
    expect(refuseClaimRequest({ name: "d", storage: "1Gi", accessModes: ["ReadWriteOnce"] }, undefined)).toEqual({
      reason: "NoStorageClass",
      message: expect.stringContaining("no default StorageClass"),
    });
  });

  test("GIVEN storage classes THEN the newest default is offered, never the offloaded class itself", () => {
    expect(offeredStorageOf([storageClass("fast", false), storageClass("local-path", true)])?.storageClass).toBe(
      "local-path",
    );
    expect(offeredStorageOf([storageClass("a", true), storageClass("abcde", true)])?.storageClass).toBe("abcde");
    expect(offeredStorageOf([storageClass(OFFLOADED_STORAGE_CLASS, true, OFFLOADED_VOLUME_PROVISIONER)])).toBe(
      undefined,
    );
    expect(offeredStorageOf([])).toBe(undefined);
  });

  test("GIVEN an accepted request THEN the provider's claim takes its size and modes, in its own class, with no volume or source", () => {
    const held = forgeHeldClaim(
      { name: "data-db-0", storage: "1Gi", accessModes: ["ReadWriteOnce"] },
      "shop-b",
      "b-id",
      "local-path",
    );
    expect(held.metadata).toMatchObject({ name: "data-db-0", namespace: "shop-b" });
    expect(held.spec).toEqual({
      storageClassName: "local-path",
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: "1Gi" } },
      volumeMode: "Filesystem",
    });
    expect(isHeldClaimOf(held, "b-id")).toBe(true);
    // Another consumer's, or one the provider's admins made: not this consumer's.
    expect(isHeldClaimOf(held, "c-id")).toBe(false);
    expect(isHeldClaimOf({ metadata: { name: "data-db-0", labels: {} } }, "b-id")).toBe(false);
  });

  test("GIVEN a pod whose claim the provider holds for its consumer THEN it may be made; one mounting any other claim is refused", () => {
    const spec = {
      containers: [{ name: "c" }],
      volumes: [{ name: "data", persistentVolumeClaim: { claimName: "data-db-0" } }],
    };
    expect(refuseUnheldClaims(spec, new Set(["data-db-0"]))).toBe(undefined);
    expect(refuseUnheldClaims(spec, new Set(["admins-own"]))).toEqual({
      reason: "ClaimNotHeld",
      message: expect.stringContaining("claim data-db-0"),
    });
  });
});

describe("the consumer's volume for a held claim", () => {
  test("GIVEN a claim its provider holds THEN the volume is bound to it and only to its virtual node", () => {
    const volume = forgeOffloadedVolume(claim, "liqo-a");
    expect(volume.metadata?.name).toBe("pulumi-liqo-u-1");
    expect(volume.spec).toMatchObject({
      capacity: { storage: "1Gi" },
      accessModes: ["ReadWriteOnce"],
      storageClassName: OFFLOADED_STORAGE_CLASS,
      persistentVolumeReclaimPolicy: "Delete",
      claimRef: { name: "data-db-0", namespace: "shop", uid: "u-1" },
    });
    expect(volume.spec?.nodeAffinity?.required?.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: ["liqo-a"] }] },
    ]);
  });
});
