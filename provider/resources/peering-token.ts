/**
 * The `PeeringToken` resource's dynamic provider: a token the provider cluster's auth service
 * accepts, of which the cluster keeps only a hash. Replacing it (a new `rotation` value or expiry)
 * makes the old token useless for new peerings; existing peerings keep their identities.
 */
import type * as pulumi from "@pulumi/pulumi";
import { ensurePeeringTokenSecret, forgePeeringToken, getPeeringTokenRecord, revokePeeringToken } from "../authentication/tokens.js";
import { loadKubeconfig } from "../kube/client.js";
import { changedProperties, checkKubeconfig, checkSeconds, Failures } from "./inputs.js";

/** Inputs, as the SDK's `PeeringToken` sends them (the provider `Cluster`'s outputs). */
export interface PeeringTokenInputs {
  readonly kubeconfig: string;
  readonly clusterId: string;
  readonly authUrl: string;
  readonly authCaCert: string;
  readonly expiresInSeconds?: number;
  readonly rotation?: string;
}

/** Outputs: what the consumer needs, the token among them (a Pulumi secret). */
export interface PeeringTokenOutputs extends PeeringTokenInputs {
  readonly token: string;
  readonly tokenId: string;
  readonly expiresAt?: string;
}

const owner = "PeeringToken";

/** The `PeeringToken` dynamic provider's operations. */
export const provider: pulumi.dynamic.ResourceProvider<PeeringTokenInputs, PeeringTokenOutputs> = {
  async check(_olds, news) {
    const failures = new Failures();
    checkKubeconfig(failures, "kubeconfig", news.kubeconfig, owner);
    checkSeconds(failures, "expiresInSeconds", news.expiresInSeconds);
    return { inputs: news, failures: failures.list };
  },
  async diff(_id, olds, news) {
    const replaces = changedProperties(olds, news, ["expiresInSeconds", "rotation"]);
    const changes = changedProperties(olds, news, ["kubeconfig", "clusterId", "authUrl", "authCaCert", "expiresInSeconds", "rotation"]);
    return { changes: changes.length > 0, replaces, deleteBeforeReplace: false };
  },
  async create(inputs) {
    const kc = loadKubeconfig(inputs.kubeconfig, `${owner}: kubeconfig`);
    const forged = forgePeeringToken();
    const expiresAt = inputs.expiresInSeconds ? new Date(Date.now() + inputs.expiresInSeconds * 1000) : undefined;
    await ensurePeeringTokenSecret(kc, { tokenId: forged.tokenId, secretHash: forged.secretHash, ...(expiresAt ? { expiresAt } : {}) });
    return { id: forged.tokenId, outs: { ...inputs, token: forged.token, tokenId: forged.tokenId, ...(expiresAt ? { expiresAt: expiresAt.toISOString() } : {}) } };
  },
  async update(_id, olds, news) {
    return { outs: { ...news, token: olds.token, tokenId: olds.tokenId, ...(olds.expiresAt ? { expiresAt: olds.expiresAt } : {}) } };
  },
  async read(id, props) {
    const record = await getPeeringTokenRecord(loadKubeconfig(props!.kubeconfig, `${owner}: kubeconfig`), id);
    return record ? { id, props: props! } : { id: "", props: {} as PeeringTokenOutputs };
  },
  async delete(id, props) {
    await revokePeeringToken(loadKubeconfig(props.kubeconfig, `${owner}: kubeconfig`), id);
  },
};
