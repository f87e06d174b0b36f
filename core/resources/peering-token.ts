/**
 * The `PeeringToken` resource's dynamic provider: a token the provider cluster's auth service
 * accepts, of which the cluster keeps only a hash. Replacing it (a new `rotation` value or expiry)
 * makes the old token useless for new peerings; existing peerings keep their identities.
 */
import { PEERING_TOKEN } from "../../declarations/peering-token.js";
import type * as pulumi from "@pulumi/pulumi";
import { changesOf, type FoundChanges, declaredRules, labelOf, urnOf } from "./diff-rules.js";
import { onFirstNeed } from "./steps.js";
import { explainedDiff, logToEngine } from "./engine-log.js";
import { deleteFailure } from "./read-failure.js";
import { forgottenReport } from "../operation/unreachable.js";
import { checkKubeconfig, checkSeconds, Failures } from "./inputs.js";

/** The token's steps and the Kubernetes client, loaded on first need: check and diff do without them. */
const tokens = onFirstNeed((): typeof import("../authentication/tokens.js") =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a static import would load it with this module
  require("../authentication/tokens.js"),
);
const kube = onFirstNeed((): typeof import("../kube/client.js") =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a static import would load it with this module
  require("../kube/client.js"),
);
/** The short look before a delete, loaded on first need (it brings the Kubernetes client). */
const look = onFirstNeed((): typeof import("../operation/cluster-look.js") =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a static import would load it with this module
  require("../operation/cluster-look.js"),
);
const kubeconfigOf = (inputs: Pick<PeeringTokenInputs, "kubeconfig">) =>
  kube().loadKubeconfig(inputs.kubeconfig, `${owner}: kubeconfig`);

/** Inputs, as the SDK's `PeeringToken` sends them (the provider `Cluster`'s outputs). */
export interface PeeringTokenInputs {
  readonly kubeconfig: string;
  readonly clusterId: string;
  readonly authUrl: string;
  readonly authCaCert: string;
  readonly expiresInSeconds?: number;
  readonly rotation?: string;
  /** Leave the stack on delete even when the cluster is out of reach, leaving the token's record there. */
  readonly force?: boolean;
}

/** Outputs: what the consumer needs, the token among them (a Pulumi secret). */
export interface PeeringTokenOutputs extends PeeringTokenInputs {
  readonly token: string;
  readonly tokenId: string;
  readonly expiresAt?: string;
}

const owner = "PeeringToken";

/**
 * What each input's change does to a token, and why: a token is fixed when it is made (its
 * record on the cluster holds only its hash and expiry), so a new one replaces it; the rest is
 * handed through.
 */
export const PEERING_TOKEN_DIFF = declaredRules<PeeringTokenOutputs, PeeringTokenInputs>(PEERING_TOKEN, {});

/** What changed between a token's state and its new inputs. */
export function peeringTokenChanges(olds: PeeringTokenOutputs, news: PeeringTokenInputs): FoundChanges<string> {
  return changesOf(PEERING_TOKEN_DIFF, olds, news);
}

/** The `PeeringToken` dynamic provider's operations. */
export const pulumiProvider: pulumi.dynamic.ResourceProvider<PeeringTokenInputs, PeeringTokenOutputs> = {
  async check(_olds, news) {
    const failures = new Failures();
    checkKubeconfig(failures, "kubeconfig", news.kubeconfig);
    checkSeconds(failures, "expiresInSeconds", news.expiresInSeconds);
    return { inputs: news, failures: failures.list };
  },
  async diff(id, olds, news) {
    return explainedDiff(owner, PEERING_TOKEN_DIFF, id, news, peeringTokenChanges(olds, news), false);
  },
  async create(inputs) {
    const { ensurePeeringTokenSecret, forgePeeringToken } = tokens();
    const kc = kubeconfigOf(inputs);
    const forged = forgePeeringToken();
    const expiresAt = inputs.expiresInSeconds ? new Date(Date.now() + inputs.expiresInSeconds * 1000) : undefined;
    await ensurePeeringTokenSecret(kc, {
      tokenId: forged.tokenId,
      secretHash: forged.secretHash,
      ...(expiresAt ? { expiresAt } : {}),
    });
    return {
      id: forged.tokenId,
      outs: {
        ...inputs,
        token: forged.token,
        tokenId: forged.tokenId,
        ...(expiresAt ? { expiresAt: expiresAt.toISOString() } : {}),
      },
    };
  },
  async update(_id, olds, news) {
    return {
      outs: {
        ...news,
        token: olds.token,
        tokenId: olds.tokenId,
        ...(olds.expiresAt ? { expiresAt: olds.expiresAt } : {}),
      },
    };
  },
  async read(id, props) {
    const record = await tokens().getPeeringTokenRecord(kubeconfigOf(props!), id);
    return record ? { id, props: props! } : { id: "", props: {} as PeeringTokenOutputs };
  },
  async delete(id, props) {
    const label = labelOf(props, id);
    const kc = kubeconfigOf(props);
    const { tokenLeftOnCluster, TOKEN_LEFT_REMEDY, revokePeeringToken } = tokens();
    const gone = await look()
      .lookBeforeDelete(kc, "revoking the token", owner, props.force ?? false)
      .catch((error: unknown) => {
        throw deleteFailure(owner, label, error);
      });
    if (gone) {
      await logToEngine(forgottenReport(owner, label, gone, tokenLeftOnCluster(id), TOKEN_LEFT_REMEDY), urnOf(props));
      return;
    }
    await revokePeeringToken(kc, id).catch((error: unknown) => {
      throw deleteFailure(owner, label, error);
    });
  },
};

/**
 * {@link pulumiProvider} under the name that stacks made before it was renamed serialized into their
 * state (`require(...).provider`): their refresh and destroy still find it.
 */
export const provider = pulumiProvider;
