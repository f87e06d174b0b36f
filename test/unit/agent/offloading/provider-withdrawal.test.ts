/** Which pod a withdrawn request may remove at once: only the one this side made for it, by the labels it gave. */
import type * as k8s from "@kubernetes/client-node";
import { MANAGED_BY, MANAGED_BY_LABEL, REMOTE_CLUSTER_LABEL, type OffloadedPod } from "../../../../core/api/index.js";
import { madeForRequest } from "../../../../agent/offloading/provider-withdrawal.js";
import { CONSUMER_POD_UID_LABEL } from "../../../../core/offloading/reflection.js";

const request = {
  metadata: { name: "shop-b.web-1", namespace: "pulumi-liqo-tenant-b", deletionTimestamp: new Date() },
  spec: { namespace: "shop-b", name: "web-1", consumerUid: "uid-web-1", pod: { containers: [] } },
} as unknown as OffloadedPod;

const pod = (labels: Record<string, string>): k8s.V1Pod => ({ metadata: { name: "web-1", labels } });
const madeFor = (consumer: string, uid = "uid-web-1") => ({
  [MANAGED_BY_LABEL]: MANAGED_BY,
  [REMOTE_CLUSTER_LABEL]: consumer,
  [CONSUMER_POD_UID_LABEL]: uid,
});

describe("madeForRequest", () => {
  test("the pod made for this request of this consumer is the one to remove", () => {
    expect(madeForRequest(pod(madeFor("b")), request, "b")).toBe(true);
  });

  test.each([
    ["another consumer's pod of the same name and uid", pod(madeFor("c"))],
    ["a pod made for another pod of the consumer (a pod of that name made again)", pod(madeFor("b", "uid-other"))],
    ["the provider's own pod, with none of the labels", pod({ app: "web" })],
    [
      "a pod with the labels a request could name but not this side's mark",
      pod({ ...madeFor("b"), [MANAGED_BY_LABEL]: "someone" }),
    ],
    ["no pod at all", undefined],
  ])("%s is not", (_case, candidate) => {
    expect(madeForRequest(candidate, request, "b")).toBe(false);
  });
});
