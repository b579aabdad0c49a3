/**
 * Bind mounts through the mount/umount binaries. Paths are in this process's own view (it may run
 * chrooted inside a task), so nothing here knows about host paths.
 */
import { execFile } from "node:child_process";
import { mountAt, type MountEntry } from "../../internal/mountinfo.js";

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 30_000 }, (err, _stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(" ")}: ${stderr.trim() || err.message}`));
      else resolve();
    });
  });
}

export async function bindMount(source: string, target: string, readonly: boolean): Promise<void> {
  await run("mount", ["--bind", source, target]);
  if (!readonly) return;
  // A bind mount ignores "ro" on its first mount(2); read-only needs a remount of the bind.
  try {
    await run("mount", ["-o", "remount,bind,ro", target]);
  } catch (err) {
    await run("umount", [target]).catch(() => undefined);
    throw err;
  }
}

/** Unmounts every mount stacked at `target`; a path that is not mounted is a no-op. */
export async function unmountAll(target: string): Promise<void> {
  while ((await mountAt(target)) !== null) await run("umount", [target]);
}

export function isReadOnly(m: MountEntry): boolean {
  return m.options.includes("ro");
}

export { mountAt };
