/**
 * A FUSE file system that can be told to stop answering (fuse_daemon.ts, its own process): for
 * tests of what happens on a node when a mount really hangs in the kernel. `cleanup()` aborts the
 * connection (every waiter is freed), lazily unmounts the FUSE mount and kills the daemon, so a
 * failed test never leaves a hung mount behind; call it in `finally`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const DAEMON = path.join(path.dirname(fileURLToPath(import.meta.url)), "fuse_daemon.js");
const CONNECTIONS = "/sys/fs/fuse/connections";

export interface FuseServer {
  mountPoint: string;
  /** The connection's number under /sys/fs/fuse/connections. */
  connection: string;
  /** From now on no request is answered (each waiter hangs in D state until cleanup). */
  hang(): void;
  cleanup(): Promise<void>;
}

/** The "major:minor" device of the mount at `mountPoint`, from mountinfo (no stat of the mount). */
function deviceOf(mountPoint: string): string | undefined {
  for (const line of fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const f = line.split(" ");
    if (f[4] === mountPoint) return f[2];
  }
  return undefined;
}

/** Mounts the FUSE file system at `mountPoint` (created), serving empty dirs at `paths`. */
export async function startFuseServer(mountPoint: string, paths: string[] = []): Promise<FuseServer> {
  fs.mkdirSync(mountPoint, { recursive: true });
  // The control file system, where a connection is aborted (mounted once per boot).
  if (fs.readdirSync(CONNECTIONS).length === 0 && !deviceOf(CONNECTIONS)) {
    await run("mount", ["-t", "fusectl", "none", CONNECTIONS]).catch(() => undefined);
  }
  const child: ChildProcess = spawn(process.execPath, [DAEMON, mountPoint, ...paths], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let cleaned = false;
  const server: FuseServer = {
    mountPoint,
    connection: "",
    hang: () => child.kill("SIGUSR1"),
    cleanup: async () => {
      if (cleaned) return;
      cleaned = true;
      if (server.connection) {
        try {
          fs.writeFileSync(path.join(CONNECTIONS, server.connection, "abort"), "1");
        } catch {
          /* already gone */
        }
      }
      await run("umount", ["-l", "--no-canonicalize", mountPoint]).catch(() => undefined);
      child.kill("SIGKILL");
    },
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the FUSE daemon did not answer INIT")), 20_000);
      child.stdout!.on("data", (d: Buffer) => {
        if (!d.toString().includes("ready")) return;
        clearTimeout(timer);
        resolve();
      });
      child.on("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`the FUSE daemon exited (${String(code)})`));
      });
    });
    const dev = deviceOf(mountPoint);
    if (!dev) throw new Error(`nothing mounted at ${mountPoint}`);
    server.connection = dev.split(":")[1]!;
    return server;
  } catch (err) {
    await server.cleanup();
    throw err;
  }
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { stdio: "ignore" });
    c.on("error", reject);
    c.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${String(code)}`))));
  });
}
