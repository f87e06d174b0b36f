/**
 * Which Kubernetes releases the product supports, and whether a cluster's is one of them. Pure: the
 * caller reads the API server's `/version`.
 *
 * The window is the last three minor releases, as peer projects support. It is written once more,
 * as patch releases the local clusters build, in `scripts/versions.sh` (`KUBERNETES_RELEASES`); a
 * unit test keeps the two equal.
 */
import type { ServerVersion } from "../kube/server-version.js";

/** The supported minor releases of Kubernetes 1, oldest first. */
export const SUPPORTED_KUBERNETES_MINORS: readonly number[] = [35, 36, 37];

/** A release as the product reasons about it. */
export interface KubernetesRelease {
  readonly major: number;
  readonly minor: number;
  /** What the API server calls itself, for messages. */
  readonly text: string;
}

/**
 * The release `version` names: from `major`/`minor` (a managed offering's `"37+"` read as 37), else
 * from `gitVersion`; undefined when neither reads as numbers.
 */
export function releaseOf(version: ServerVersion): KubernetesRelease | undefined {
  const text = version.gitVersion ?? `${version.major ?? "?"}.${version.minor ?? "?"}`;
  const major = Number.parseInt(version.major ?? "", 10);
  const minor = Number.parseInt(version.minor ?? "", 10);
  if (Number.isInteger(major) && Number.isInteger(minor)) return { major, minor, text };
  const fromGit = /^v?(\d+)\.(\d+)/.exec(version.gitVersion ?? "");
  return fromGit ? { major: Number(fromGit[1]), minor: Number(fromGit[2]), text } : undefined;
}

/** The supported window as users read it: `1.35 to 1.37`. */
export function supportedWindow(): string {
  return `1.${SUPPORTED_KUBERNETES_MINORS[0]} to 1.${SUPPORTED_KUBERNETES_MINORS[SUPPORTED_KUBERNETES_MINORS.length - 1]}`;
}

/**
 * Why a cluster running `version` is refused, or undefined when its release is in the window. A
 * version that does not read as a release is refused too: the product cannot say what it would meet.
 */
export function releaseRefusal(version: ServerVersion): string | undefined {
  const release = releaseOf(version);
  if (!release)
    return `its API server reports a version that names no release (${JSON.stringify(version)}); supported: Kubernetes ${supportedWindow()}`;
  if (release.major === 1 && SUPPORTED_KUBERNETES_MINORS.includes(release.minor)) return undefined;
  return (
    `it runs Kubernetes ${release.text}, outside the supported releases (${supportedWindow()}): ` +
    `upgrade it, or peer it with a release of pulumi-liqo that supports ${release.major}.${release.minor}`
  );
}

/** The first minor release whose API server serves `MutatingAdmissionPolicy` without a flag (`admissionregistration.k8s.io/v1`). */
export const ADMISSION_POLICY_MINOR = 36;

/**
 * How a cluster's API server is made to place the pods of offloaded namespaces: by its own
 * `MutatingAdmissionPolicy` where it serves one, else by a webhook the cluster's agent serves
 * (../offloading/placement-webhook.ts). A release that could not be read counts as the newest.
 */
export type PlacementMechanism = "MutatingAdmissionPolicy" | "MutatingWebhook";

/** The {@link PlacementMechanism} for a cluster at `release`. */
export function placementMechanismFor(release: KubernetesRelease | undefined): PlacementMechanism {
  return release === undefined || release.major > 1 || release.minor >= ADMISSION_POLICY_MINOR
    ? "MutatingAdmissionPolicy"
    : "MutatingWebhook";
}
