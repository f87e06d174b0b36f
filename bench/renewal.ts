/**
 * An identity's whole life, for real: a lab whose provider's agent (a pod, as deployed by a
 * `Cluster`; its Deployment then given `LIQO_IDENTITY_LIFETIME_SECONDS`) issues identities of the CSR
 * API's minimum lifetime (600 s; valid 900 s, as the signer dates them 5 minutes back) and whose
 * consumer's agent renews them at its default, two thirds of that validity (300 s after issuance). The run peers b with a ' +
   'and then, every second until well past the first identity's
 * expiry, calls a's API server with whatever identity b holds and reads b's virtual node. It
 * reports when the renewal came (as a share of the lifetime), how calls fared across it and past
 * the first identity's expiry, and whether the node ever left Ready. About 11 minutes.
 */
import * as k8s from "@kubernetes/client-node";
import { X509Certificate } from "node:crypto";
import { clusterOf } from "../local-cluster/lab.js";
import { certificateValidity } from "../core/authentication/identity.js";
import { loadKubeconfig } from "../core/kube/client.js";
import { describeKubeError } from "../core/kube/errors.js";
import { getResourceOffer } from "../core/negotiation/request.js";
import { getIdentityKubeconfig, heldCertificateOf } from "../core/authentication/stored-identity.js";
import { createPeering, deletePeering, type PeeringRecord } from "../core/peering/peering.js";
import { progressTo } from "../core/operation/progress.js";
import { nodeReadiness } from "../core/virtual-node/node.js";
import { SYSTEM_NAMESPACE } from "../core/api/index.js";
import { AGENT_NAME } from "../core/cluster/agent-components.js";
import { waitForAgentRollout } from "../core/cluster/agent-rollout.js";
import { kubectl } from "../local-cluster/pods.js";
import { preparePeering } from "../harness/peering-pair.js";
import { series, target } from "./figures.js";
import type { Log, SectionResult } from "./figures.js";
import { privateLabs, type LabRunner } from "./labs.js";

const LIFETIME_SECONDS = 600;
/** How long past the first identity's expiry the calls go on: they must be made with its successor. */
const PAST_EXPIRY_MS = 30_000;

/** Runs the lab, peers, and watches the identity renewed; resolves the figures. */
export async function benchRenewal(log: Log, labs: LabRunner = privateLabs): Promise<SectionResult> {
  log(`renewal: two local clusters, a's identities lasting ${LIFETIME_SECONDS} s`);
  return labs([{ name: "a" }, { name: "b" }], {}, async (lab) => {
    const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
    const pair = await preparePeering(a, b, { cpu: "1", memory: "1Gi", pods: 5 });
    const quiet = progressTo(() => undefined);
    let record: PeeringRecord;
    try {
      // The one knob the agent has for it (not an input of Cluster): set on a's agent, rolled out before peering.
      await kubectl(a, [
        ...["-n", SYSTEM_NAMESPACE, "set", "env", `deployment/${AGENT_NAME}`],
        `LIQO_IDENTITY_LIFETIME_SECONDS=${LIFETIME_SECONDS}`,
      ]);
      await waitForAgentRollout(pair.provider.kc, 180_000);
      record = await createPeering(pair.request, quiet);
    } catch (error) {
      await pair.cleanup();
      throw error;
    }
    try {
      const core = pair.consumer.kc.makeApiClient(k8s.CoreV1Api);
      const location = { tenantNamespace: record.tenantNamespace, name: record.requestName };
      const held = async () => {
        const text = (await getIdentityKubeconfig(pair.consumer.kc, pair.provider.clusterId))!;
        const { certificatePem } = heldCertificateOf(text, "b's identity");
        return {
          serial: new X509Certificate(certificatePem).serialNumber,
          validity: certificateValidity(certificatePem),
          kc: loadKubeconfig(text, "b's identity"),
        };
      };
      const first = await held();
      const lifetimeMs = first.validity.notAfter.getTime() - first.validity.notBefore.getTime();
      const until = first.validity.notAfter.getTime() + PAST_EXPIRY_MS;
      log(
        `renewal: peered; the first identity expires at ${first.validity.notAfter.toISOString()}; watching until ${new Date(until).toISOString()}`,
      );
      const latencies: number[] = [];
      const failures: string[] = [];
      const notReady: string[] = [];
      const renewals: { at: number; serial: string }[] = [];
      let callsPastExpiry = 0;
      let last = first.serial;
      while (Date.now() < until) {
        const tick = Date.now();
        const now = await held();
        if (now.serial !== last) {
          renewals.push({ at: tick, serial: now.serial });
          log(
            `renewal: identity replaced after ${Math.round((tick - first.validity.notBefore.getTime()) / 1000)} s; it now ` +
              `expires at ${now.validity.notAfter.toISOString()}`,
          );
          last = now.serial;
        }
        const started = performance.now();
        try {
          await getResourceOffer(now.kc, location);
          latencies.push(performance.now() - started);
          if (tick > first.validity.notAfter.getTime()) callsPastExpiry++;
        } catch (error) {
          failures.push(`${new Date(tick).toISOString()} ${describeKubeError(error)}`);
        }
        const readiness = nodeReadiness(await core.readNode({ name: record.virtualNodeName }));
        if (!readiness.ready) notReady.push(`${new Date(tick).toISOString()} ${readiness.state}`);
        // One look a second: the heartbeat's own pace is ten.
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1_000 - (Date.now() - tick))));
      }
      for (const line of [...failures, ...notReady].slice(0, 10)) log(`renewal: ${line}`);
      const firstRenewalShare = renewals.length
        ? (renewals[0]!.at - first.validity.notBefore.getTime()) / lifetimeMs
        : Number.NaN;
      return {
        series: [series("API call with the identity held, across renewal", "ms", latencies)],
        targets: [
          target(
            "first renewal, share of the lifetime, at least",
            Math.round(firstRenewalShare * 100) / 100,
            "min",
            0.6,
          ),
          target(
            "first renewal, share of the lifetime, at most",
            Math.round(firstRenewalShare * 100) / 100,
            "max",
            0.75,
          ),
          target("failed API calls across the renewal", failures.length, "max", 0),
          target("samples with the node not Ready", notReady.length, "max", 0),
          target("API calls made past the first identity's expiry", callsPastExpiry, "min", 1),
        ],
        details: {
          lifetimeSeconds: LIFETIME_SECONDS,
          renewals: renewals.map((r) => ({
            at: new Date(r.at).toISOString(),
            afterSeconds: Math.round((r.at - first.validity.notBefore.getTime()) / 1000),
          })),
          failures,
          notReady,
        },
      };
    } finally {
      await deletePeering(pair.consumerKubeconfig, record, pair.auth, { force: true, timeoutMs: 20_000 }, quiet).catch(
        () => undefined,
      );
      await pair.cleanup();
    }
  });
}
