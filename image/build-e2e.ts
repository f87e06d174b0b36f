/**
 * Builds the conformance suite's images (image/e2e-images.ts) into OCI archives: reads what they
 * are made of from this machine (the toolchain's agnhost, coredns and podtool; the busybox
 * `scripts/toolchain.sh conformance` builds from Debian's source package; dig, nc, curl from
 * Debian's packages, which it installs; bash and getent, which every Debian has).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { e2eImages, type E2eImageInputs } from "./e2e-images.js";
import { toolchainHome } from "./build.js";
import { findOnPath, mergedUsrLinks, sharedLibraries } from "./host-files.js";
import { writeImageArchive, type ImageArchive } from "./oci-archive.js";

const run = promisify(execFile);

/** One archive written, with the further names the nodes give its image. */
export interface BuiltE2eImage extends ImageArchive {
  readonly file: string;
  readonly aliases: readonly string[];
}

const BUILDS_IT = "run scripts/toolchain.sh conformance";
const HINT = `${BUILDS_IT}, which installs it`;

/**
 * Where `scripts/toolchain.sh conformance` built the images' busybox (`build_e2e_busybox`):
 * `bin/busybox`. Found by $LIQO_E2E_BUSYBOX_HOME, not on PATH, where it would shadow the machine's.
 */
export const e2eBusyboxHome = (): string =>
  toolchainHome(
    "busybox for the conformance images",
    "LIQO_E2E_BUSYBOX_HOME",
    join("bin", "busybox"),
    "scripts/toolchain.sh conformance",
  );

/** `path`, which must exist (the toolchain puts it there). */
function existing(path: string): string {
  if (!existsSync(path)) throw new Error(`image: no ${path} (${BUILDS_IT})`);
  return path;
}

/** What the images are made of, read from this machine; `agnhostDir` holds agnhost, agnhost.version and its certificate and key. */
export async function e2eImageInputs(agnhostDir: string): Promise<E2eImageInputs> {
  const busybox = join(e2eBusyboxHome(), "bin", "busybox");
  const { stdout: applets } = await run(busybox, ["--list-full"]);
  const tools = {
    bash: findOnPath("bash", "Debian's bash"),
    dig: findOnPath("dig", `Debian's bind9-dnsutils: ${HINT}`),
    nc: findOnPath("nc.openbsd", `Debian's netcat-openbsd: ${HINT}`),
    curl: findOnPath("curl", `Debian's curl: ${HINT}`),
    getent: findOnPath("getent", "Debian's libc-bin"),
  };
  const version = (
    await readFile(join(agnhostDir, "agnhost.version"), "utf8").catch(() => {
      throw new Error(`image: no agnhost.version in ${agnhostDir} (${BUILDS_IT})`);
    })
  ).trim();
  return {
    agnhost: {
      path: join(agnhostDir, "agnhost"),
      version,
      certificate: existing(join(agnhostDir, "localhost.crt")),
      key: existing(join(agnhostDir, "localhost.key")),
    },
    busybox: { path: busybox, applets: applets.split("\n").filter(Boolean) },
    tools,
    libraries: await sharedLibraries(Object.values(tools)),
    usrLinks: await mergedUsrLinks(),
    coredns: findOnPath("coredns", "the toolchain builds it: . scripts/env.sh"),
    pause: findOnPath("podtool", "the toolchain builds it: . scripts/env.sh"),
  };
}

/** Writes the suite's image archives to `outDir`, one after the other; resolves what each holds. */
export async function buildE2eImages(agnhostDir: string, outDir: string): Promise<BuiltE2eImage[]> {
  await mkdir(outDir, { recursive: true });
  const built: BuiltE2eImage[] = [];
  for (const image of e2eImages(await e2eImageInputs(agnhostDir))) {
    const name = image.spec.reference.split("/").pop()!.replace(/[:]/g, "-");
    const file = join(outDir, `${name}.oci.tar`);
    built.push({ ...(await writeImageArchive(file, image.spec)), file, aliases: image.aliases });
  }
  return built;
}
