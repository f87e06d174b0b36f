/** What an API server says of its own release (`GET /version`). */
import * as k8s from "@kubernetes/client-node";

/** What an API server's `/version` says of its release (the fields this reads). */
export interface ServerVersion {
  /** The major release, e.g. `"1"`. */
  readonly major?: string;
  /** The minor release; managed offerings add a suffix, e.g. `"37+"`. */
  readonly minor?: string;
  /** The full version, e.g. `"v1.37.2"` or `"v1.35.4-eks-1a2b3c"`. */
  readonly gitVersion?: string;
}

/** Reads the release `kc`'s API server runs; rejects as the client does when it cannot be read. */
export async function readServerVersion(kc: k8s.KubeConfig): Promise<ServerVersion> {
  const info = await kc.makeApiClient(k8s.VersionApi).getCode();
  return { major: info.major, minor: info.minor, gitVersion: info.gitVersion };
}
