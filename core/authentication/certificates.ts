/**
 * Signing a consumer's identity through the provider cluster's own CSR API: submit, approve, wait
 * for kube-controller-manager to sign. CSRs of signer `kubernetes.io/kube-apiserver-client` are
 * never approved automatically, so the auth service, having checked the token and the subject,
 * approves them itself.
 */
import * as k8s from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import { MANAGED_BY, MANAGED_BY_LABEL, REMOTE_CLUSTER_LABEL } from "../api/names.js";
import { deleteOptional, describeFailure, serverOf } from "../kube/client.js";
import { poll } from "../wait/poll.js";

const STEP = "authentication";

/** The signer whose certificates the API server accepts as client identities. */
export const CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client";

/** Lifetime asked for an identity: 30 days (the API's minimum is 600 s; the signer may cap it lower). */
export const IDENTITY_EXPIRATION_SECONDS = 30 * 24 * 3600;

/** Input of {@link forgeCertificateSigningRequest}. */
export interface CsrObjectArgs {
  /** The consumer the certificate is for. */
  readonly consumerClusterId: string;
  /** PEM PKCS#10 request, already checked by `checkIdentityCsr`. */
  readonly csrPem: string;
  /** Requested lifetime. @default IDENTITY_EXPIRATION_SECONDS */
  readonly expirationSeconds?: number;
}

/**
 * The CertificateSigningRequest object: a unique name per request (each `pulumi up` that asks gets a
 * fresh certificate), labelled with the consumer so that revocation and cleanup find it.
 */
export function forgeCertificateSigningRequest(args: CsrObjectArgs): k8s.V1CertificateSigningRequest {
  return {
    apiVersion: "certificates.k8s.io/v1",
    kind: "CertificateSigningRequest",
    metadata: {
      name: `pulumi-liqo-${args.consumerClusterId}-${randomBytes(4).toString("hex")}`,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [REMOTE_CLUSTER_LABEL]: args.consumerClusterId },
    },
    spec: {
      request: Buffer.from(args.csrPem, "utf8").toString("base64"),
      signerName: CLIENT_SIGNER,
      expirationSeconds: Math.max(600, args.expirationSeconds ?? IDENTITY_EXPIRATION_SECONDS),
      usages: ["digital signature", "key encipherment", "client auth"],
    },
  };
}

/** Creates the CSR object. Resolves its name. */
export async function submitCsr(kc: k8s.KubeConfig, csr: k8s.V1CertificateSigningRequest): Promise<string> {
  const api = kc.makeApiClient(k8s.CertificatesV1Api);
  const created = await api
    .createCertificateSigningRequest({ body: csr })
    .catch(describeFailure(`${STEP}: creating CertificateSigningRequest ${csr.metadata?.name ?? ""}`, serverOf(kc)));
  return created.metadata!.name!;
}

/** Approves a CSR through its `/approval` subresource (the only way to approve). */
export async function approveCsr(kc: k8s.KubeConfig, name: string): Promise<void> {
  const api = kc.makeApiClient(k8s.CertificatesV1Api);
  const endpoint = serverOf(kc);
  const current = await api
    .readCertificateSigningRequest({ name })
    .catch(describeFailure(`${STEP}: reading CertificateSigningRequest ${name}`, endpoint));
  current.status = {
    ...current.status,
    conditions: [
      ...(current.status?.conditions ?? []).filter((c) => c.type !== "Approved"),
      {
        type: "Approved",
        status: "True",
        reason: "PeeringTokenVerified",
        message: "approved by the pulumi-liqo auth service after verifying a peering token",
      },
    ],
  };
  await api
    .replaceCertificateSigningRequestApproval({ name, body: current })
    .catch(describeFailure(`${STEP}: approving CertificateSigningRequest ${name}`, endpoint));
}

/** Knobs of {@link waitForCertificate}. */
export interface CertificateWaitOptions {
  /** How long to wait for the signer. @default 60000 */
  readonly timeoutMs?: number;
  /** The operation's shared deadline. */
  readonly signal?: AbortSignal;
}

/**
 * Waits until the cluster's signer has issued the certificate; resolves its PEM. A `Denied` or
 * `Failed` condition ends the wait at once, with the signer's reason.
 */
export async function waitForCertificate(
  kc: k8s.KubeConfig,
  name: string,
  options: CertificateWaitOptions = {},
): Promise<string> {
  const api = kc.makeApiClient(k8s.CertificatesV1Api);
  return poll(
    { step: STEP, object: `certificate of CertificateSigningRequest ${name}`, endpoint: serverOf(kc) },
    { timeoutMs: options.timeoutMs ?? 60_000, signal: options.signal },
    async () => {
      const csr = await api.readCertificateSigningRequest({ name });
      const conditions = csr.status?.conditions ?? [];
      const terminal = conditions.find((c) => (c.type === "Denied" || c.type === "Failed") && c.status === "True");
      if (terminal)
        return {
          failed: true,
          reason: `${terminal.type}: ${terminal.message ?? terminal.reason ?? "no reason given"}`,
        };
      if (csr.status?.certificate)
        return { done: true, value: Buffer.from(csr.status.certificate, "base64").toString("utf8") };
      return { done: false, state: conditions.map((c) => `${c.type}=${c.status}`).join(", ") || "pending approval" };
    },
  );
}

/**
 * Deletes a consumer's CSR objects, except `keep`. A CSR is only a record once signed: deleting it
 * neither revokes nor shortens the certificate; it keeps the cluster tidy when a consumer asks again.
 */
export async function deleteConsumerCsrs(
  kc: k8s.KubeConfig,
  consumerClusterId: string,
  keep?: string,
): Promise<number> {
  const api = kc.makeApiClient(k8s.CertificatesV1Api);
  const endpoint = serverOf(kc);
  const listed = await api
    .listCertificateSigningRequest({
      labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY},${REMOTE_CLUSTER_LABEL}=${consumerClusterId}`,
    })
    .catch(describeFailure(`${STEP}: listing CSRs of consumer ${consumerClusterId}`, endpoint));
  let deleted = 0;
  for (const csr of listed.items) {
    const name = csr.metadata!.name!;
    if (name === keep) continue;
    if (await deleteCsr(kc, name)) deleted++;
  }
  return deleted;
}

/** Deletes one CSR; resolves whether it was there. */
export async function deleteCsr(kc: k8s.KubeConfig, name: string): Promise<boolean> {
  const api = kc.makeApiClient(k8s.CertificatesV1Api);
  return deleteOptional(() => api.deleteCertificateSigningRequest({ name })).catch(
    describeFailure(`${STEP}: deleting CertificateSigningRequest ${name}`, serverOf(kc)),
  );
}
