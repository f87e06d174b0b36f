/**
 * Whether an install that deploys no agent (no `agent.image`) must stop: judged from what the
 * cluster shows (the agent's Deployment, its Lease) and how long the install has waited.
 */
import type * as k8s from "@kubernetes/client-node";
import { AGENT_APPEARANCE_GRACE_MS, isAgentLeaseFresh, missingAgent } from "../../../../core/cluster/agent.js";

const NOW = new Date("2026-11-25T12:00:00.000Z");

/** A lease renewed `secondsAgo` before {@link NOW}. */
const leaseRenewed = (secondsAgo: number): k8s.V1Lease => ({
  spec: {
    leaseDurationSeconds: 30,
    renewTime: new Date(NOW.getTime() - secondsAgo * 1000).toISOString() as unknown as k8s.V1MicroTime,
  },
});

describe("missingAgent", () => {
  test("GIVEN no Deployment and no Lease WHEN the grace has passed THEN the install stops, naming agent.image and both", () => {
    const reason = missingAgent({
      lease: undefined,
      deploymentFound: false,
      now: NOW,
      waitedMs: AGENT_APPEARANCE_GRACE_MS,
    });
    expect(reason).toMatch(/^agent\.image is not set/);
    expect(reason).toContain("no Deployment pulumi-liqo-system/pulumi-liqo-agent");
    expect(reason).toContain("no agent Lease pulumi-liqo-system/agent");
    expect(reason).toContain("after 15 s");
  });

  test("GIVEN a stale Lease and no Deployment WHEN the grace has passed THEN the reason says when it was last renewed", () => {
    const reason = missingAgent({
      lease: leaseRenewed(300),
      deploymentFound: false,
      now: NOW,
      waitedMs: AGENT_APPEARANCE_GRACE_MS + 1,
    });
    expect(reason).toContain("a stale agent Lease pulumi-liqo-system/agent (last renewed 2026-11-25T11:55:00.000Z");
    expect(reason).toContain("no Deployment");
  });

  test("GIVEN a Lease that was never renewed WHEN the grace has passed THEN it counts as stale, renewed never", () => {
    expect(missingAgent({ lease: {}, deploymentFound: false, now: NOW, waitedMs: 20_000 })).toContain(
      "last renewed never",
    );
  });

  test("GIVEN nothing seen yet WHEN within the grace THEN the install waits (an agent already running may not have renewed yet)", () => {
    expect(
      missingAgent({ lease: undefined, deploymentFound: false, now: NOW, waitedMs: AGENT_APPEARANCE_GRACE_MS - 1 }),
    ).toBeUndefined();
  });

  test("GIVEN the agent's Deployment WHEN no Lease long after THEN the install waits (it may be rolling out)", () => {
    expect(missingAgent({ lease: undefined, deploymentFound: true, now: NOW, waitedMs: 600_000 })).toBeUndefined();
  });

  test("GIVEN a fresh Lease and no Deployment WHEN long after THEN the install waits (an agent runs there)", () => {
    expect(isAgentLeaseFresh(leaseRenewed(5), NOW)).toBe(true);
    expect(
      missingAgent({ lease: leaseRenewed(5), deploymentFound: false, now: NOW, waitedMs: 600_000 }),
    ).toBeUndefined();
  });
});
