/** Which processes work from under a directory: what a lab's teardown stops before removing it. */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pidsUsing } from "../../../host/processes.js";

describe("pidsUsing", () => {
  const started: ChildProcess[] = [];
  const dir = mkdtempSync(join(tmpdir(), "pids-using-"));
  afterAll(() => {
    // Each shell leads a process group of its own: its `sleep` goes with it.
    for (const child of started) process.kill(-child.pid!, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });
  /**
   * A shell that waits with `args` on its command line, once it has exec'd (before its 'spawn'
   * event its command line is still this process's).
   */
  const sleep = async (args: string[], cwd?: string): Promise<number> => {
    const child = spawn("sh", ["-c", "sleep 300; :", "sh", ...args], { cwd, stdio: "ignore", detached: true });
    started.push(child);
    await new Promise((resolve, reject) => child.once("spawn", resolve).once("error", reject));
    return child.pid!;
  };

  test("GIVEN processes working in, naming and not touching a directory THEN only those working in or naming it are found", async () => {
    const inside = await sleep([], dir);
    const naming = await sleep([`${dir}/state`]);
    const flag = await sleep([`--root=${dir}/run`]);
    const elsewhere = await sleep([], tmpdir());
    const sibling = await sleep([`${dir}-other/state`]);
    const found = pidsUsing(dir);
    expect([inside, naming, flag].filter((pid) => !found.includes(pid))).toEqual([]);
    expect(found).not.toContain(elsewhere);
    expect(found).not.toContain(sibling);
    expect(found).not.toContain(process.pid);
  });
});
