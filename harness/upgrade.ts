/**
 * An upgrade as a user makes one, as the upgrade test and the benchmark's `upgrade` section set it
 * up: the previous release (scripts/versions.sh PREVIOUS_RELEASE, built with its own agent image by
 * `scripts/toolchain.sh previous-release`) makes a stack of its own examples/local-peering on a lab
 * of clusters `a` and `b`, with b's namespace offloaded and an app of podtool pods on the virtual
 * node behind a Service of b; then the stack's package, program and agent image become this
 * repository's, for a `pulumi up` to upgrade it.
 */
import * as k8s from "@kubernetes/client-node";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_AGENT_IMAGE } from "../core/cluster/agent-image.js";
import { deleteOptional, readOptional } from "../core/kube/client.js";
import { poll } from "../core/wait/poll.js";
import { clusterOf, loadImage, type LabState } from "../local-cluster/lab.js";
import { kubectl, podName, runPodtool, POD_NAMESPACE } from "../local-cluster/pods.js";
import { adminConfig } from "./install.js";
import { deleteNamespaceAndWait, runPodtoolDeployment } from "./offloading.js";
import {
  configureForLab,
  copyProgram,
  failureSummary,
  linkPackages,
  PulumiWorkspace,
  REPO,
  setConfig,
} from "./pulumi.js";

/** This repository's program of the one-stack peering, which an upgraded stack runs. */
const CURRENT_PROGRAM = join(REPO, "examples", "local-peering");

/** The previous release, as `scripts/toolchain.sh previous-release` built it. */
export interface PreviousRelease {
  /** Its package's root: built, with its node_modules and its examples. */
  readonly root: string;
  /** Its agent image's reference, and the archive the lab's nodes load it from. */
  readonly image: string;
  readonly archive: string;
}

/** The previous release, or an error that says how to build it. */
export function previousRelease(): PreviousRelease {
  const home = process.env["LIQO_PREVIOUS_RELEASE_HOME"];
  const root = home ? join(home, "package") : "";
  const buildFile = join(root, "dist", "core", "cluster", "agent-build.json");
  if (!home || !existsSync(buildFile))
    throw new Error(
      `the previous release is not built at LIQO_PREVIOUS_RELEASE_HOME=${home ?? "(unset)"}: run ` +
        "scripts/toolchain.sh previous-release and source scripts/env.sh (scripts/test.sh does both)",
    );
  const { image } = JSON.parse(readFileSync(buildFile, "utf8")) as { image: string };
  return { root, image, archive: join(home, "image", "agent.oci.tar") };
}

/** `<version>-<build>`: the tag of an agent image's reference, as a Cluster's `agentVersion` says it. */
export const tagOf = (image: string): string => image.slice(image.lastIndexOf(":") + 1);

/** What {@link previousReleaseStack} made. */
export interface PreviousStack {
  readonly workspace: PulumiWorkspace;
  /** The app's pods on the virtual node, as b shows them. */
  readonly pods: readonly k8s.V1Pod[];
  /** Removes what it made (the stack, destroyed if it is not yet, the namespace, b's podtool pod if it made it). */
  readonly cleanUp: () => Promise<void>;
}

/**
 * Makes the previous release's stack on `lab`: b's namespace `namespace` offloaded, Deployment and
 * Service `app` of `replicas` pods on the virtual node, and b's podtool pod on node 1 (the client
 * of {@link serviceAnswer} and of flows). On failure it removes what it made.
 */
export async function previousReleaseStack(
  lab: LabState,
  previous: PreviousRelease,
  { namespace, app, replicas }: { readonly namespace: string; readonly app: string; readonly replicas: number },
): Promise<PreviousStack> {
  const b = clusterOf(lab, "b");
  const core = adminConfig(b).makeApiClient(k8s.CoreV1Api);
  await loadImage(lab, previous.archive);
  const clientWasThere =
    (await readOptional(() => core.readNamespacedPod({ name: podName(b, 1), namespace: POD_NAMESPACE }))) !== undefined;
  const workspace = await PulumiWorkspace.create(join(previous.root, "examples", "local-peering"), "test", undefined, {
    release: previous.root,
  });
  const cleanUp = async (): Promise<void> => {
    await workspace.pulumi(["destroy", "--yes", "--skip-preview"]);
    workspace.dispose();
    if (!clientWasThere)
      await deleteOptional(() => core.deleteNamespacedPod({ name: podName(b, 1), namespace: POD_NAMESPACE }));
    await deleteNamespaceAndWait(adminConfig(b), namespace);
  };
  try {
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await runPodtool(b, 1);
    await configureForLab(workspace, lab);
    await setConfig(workspace, [
      ["agentImage", previous.image],
      ["offloadNamespace", namespace],
    ]);
    const made = await workspace.pulumi(["up", "--yes", "--skip-preview"]);
    if (made.exitCode !== 0) throw new Error(`the previous release's up failed:\n${failureSummary(made)}`);
    const pods = await runPodtoolDeployment(adminConfig(b), namespace, app, replicas, "liqo-a");
    await core.createNamespacedService({
      namespace,
      body: { metadata: { name: app }, spec: { selector: { app }, ports: [{ port: 8080 }] } },
    });
    return { workspace, pods, cleanUp };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

/** Makes `workspace` today's: this repository's package (a user's `npm install`), its program, its agent image. */
export async function toCurrentRelease(workspace: PulumiWorkspace): Promise<void> {
  copyProgram(CURRENT_PROGRAM, workspace.programDir);
  linkPackages(workspace.programDir);
  await setConfig(workspace, [["agentImage", DEFAULT_AGENT_IMAGE]]);
}

/** What b's podtool pod on node 1 gets from Service `app` of `namespace`, by name through b's cluster DNS. */
export function serviceAnswer(lab: LabState, namespace: string, app: string): Promise<string> {
  const b = clusterOf(lab, "b");
  return poll(
    { step: "upgrade", object: `Service ${namespace}/${app} answering`, endpoint: b.apiServerUrl },
    { timeoutMs: 90_000, intervalMs: 1_000 },
    async () =>
      kubectl(b, ["exec", podName(b, 1), "--", "/podtool", "tcp", `${app}.${namespace}.svc.cluster.local:8080`]).then(
        (out) => ({ done: true, value: out }),
        (error: Error) => ({ done: false, state: error.message }),
      ),
  );
}
