/**
 * A Docker Engine of the test's own: `dockerd` with its data root, exec root, socket and pid file
 * under the test's dir, no bridge and no iptables (nothing of the host's network touched), and
 * images built locally with `docker import` from a rootfs tar (no registry is reachable):
 * - a shell image: /bin/sh (dash) and a few coreutils with their shared libraries;
 * - a node image: the host's node binary and libraries, and berth's bin/, dist/src, proto/ and
 *   node_modules at /berth (so `node /berth/bin/berth csi-hostpath …` runs the hostpath plugin).
 * The rootfs is a dir of symlinks to the host's files, tarred with -h (dereferenced), so nothing is
 * copied. stop() removes every container, stops the daemon (the one this helper started, by pid),
 * checks nothing is left mounted under the dir and removes it.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { mountsUnder } from "./mounts.js";
import { REPO_ROOT } from "./agent_process.js";

const run = promisify(execFile);

export const SHELL_IMAGE = "berth-test/sh:1";
export const NODE_IMAGE = "berth-test/node:1";

/** Where dockerd is: Debian's docker.io installs it in /usr/sbin. Null when it is not installed. */
export function dockerdPath(): string | null {
  for (const p of ["/usr/sbin/dockerd", "/usr/bin/dockerd"]) if (fs.existsSync(p)) return p;
  return null;
}

export class Dockerd {
  readonly socket: string;
  readonly endpoint: string;
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();

  constructor(readonly dir: string) {
    this.socket = path.join(dir, "docker.sock");
    this.endpoint = `unix://${this.socket}`;
  }

  async start(): Promise<void> {
    const dockerd = dockerdPath();
    if (dockerd === null) throw new Error("dockerd is not installed (apt-get install docker.io)");
    fs.mkdirSync(this.dir, { recursive: true });
    const log = fs.openSync(path.join(this.dir, "dockerd.log"), "a");
    this.child = spawn(
      dockerd,
      [
        "--data-root",
        path.join(this.dir, "data"),
        "--exec-root",
        path.join(this.dir, "exec"),
        "--host",
        this.endpoint,
        "--pidfile",
        path.join(this.dir, "dockerd.pid"),
        "--bridge=none",
        "--iptables=false",
        "--ip6tables=false",
      ],
      { stdio: ["ignore", log, log] },
    );
    fs.closeSync(log);
    const child = this.child;
    this.exited = new Promise((resolve) => child.once("exit", () => resolve()));
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await this.docker(["version"]);
        return;
      } catch (err) {
        if (child.exitCode !== null || Date.now() > deadline) {
          throw new Error(`dockerd did not come up: ${(err as Error).message}\n${this.log()}`, {
            cause: err,
          });
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  /** Runs the docker CLI against this daemon; resolves with its stdout. */
  async docker(args: string[], input?: string): Promise<string> {
    const { stdout } = await run("docker", ["-H", this.endpoint, ...args], {
      maxBuffer: 64 << 20,
      ...(input !== undefined ? { input } : {}),
    });
    return stdout;
  }

  /** The IDs of every container (running or not). */
  async containers(): Promise<string[]> {
    return (await this.docker(["ps", "-aq", "--no-trunc"])).split("\n").filter(Boolean);
  }

  log(): string {
    try {
      return fs.readFileSync(path.join(this.dir, "dockerd.log"), "utf8").slice(-4000);
    } catch {
      return "";
    }
  }

  /** Imports a rootfs (a dir of symlinks, dereferenced by tar -h) as `image`. */
  async importRootfs(rootfs: string, image: string): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const tar = spawn("tar", ["-h", "-C", rootfs, "-c", "."], { stdio: ["ignore", "pipe", "pipe"] });
      const imp = spawn("docker", ["-H", this.endpoint, "import", "-", image], {
        stdio: ["pipe", "ignore", "pipe"],
      });
      let err = "";
      tar.stderr.on("data", (d: Buffer) => (err += d.toString()));
      imp.stderr.on("data", (d: Buffer) => (err += d.toString()));
      tar.stdout.pipe(imp.stdin);
      imp.on("error", reject);
      imp.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`docker import: ${err}`))));
    });
  }

  /** The shell image: dash as /bin/sh and a few tools, with their libraries. */
  async buildShellImage(): Promise<string> {
    const root = path.join(this.dir, "rootfs-sh");
    await linkRootfs(root, {
      "/bin/sh": "/bin/dash",
      ...tools(["cat", "sleep", "ls", "mkdir", "echo", "date", "touch", "stat", "stty"]),
    });
    await this.importRootfs(root, SHELL_IMAGE);
    return SHELL_IMAGE;
  }

  /** The node image: node and berth at /berth (`node /berth/bin/berth csi-hostpath …`). */
  async buildNodeImage(): Promise<string> {
    const root = path.join(this.dir, "rootfs-node");
    await linkRootfs(root, {
      "/bin/sh": "/bin/dash",
      "/usr/bin/node": process.execPath,
      ...tools(["cat", "sleep", "ls", "mkdir", "mount", "umount"]),
      "/berth/package.json": path.join(REPO_ROOT, "package.json"),
      "/berth/bin": path.join(REPO_ROOT, "bin"),
      "/berth/proto": path.join(REPO_ROOT, "proto"),
      "/berth/dist/src": path.join(REPO_ROOT, "dist", "src"),
      "/berth/node_modules": fs.realpathSync(path.join(REPO_ROOT, "node_modules")),
    });
    await this.importRootfs(root, NODE_IMAGE);
    return NODE_IMAGE;
  }

  /** Removes every container, stops the daemon, checks nothing is mounted under the dir, removes it. */
  async stop(): Promise<{ mounts: string[] }> {
    if (this.child && this.child.exitCode === null) {
      const ids = await this.containers().catch(() => []);
      if (ids.length > 0) await this.docker(["rm", "-f", "-v", ...ids]).catch(() => "");
      this.child.kill("SIGTERM");
      const timer = setTimeout(() => this.child?.kill("SIGKILL"), 30_000);
      await this.exited;
      clearTimeout(timer);
    }
    const mounts = await mountsUnder(this.dir);
    for (const m of mounts.reverse()) await run("umount", ["-l", m]).catch(() => undefined);
    fs.rmSync(this.dir, { recursive: true, force: true });
    return { mounts };
  }
}

/** `/bin/NAME` for each tool that exists on the host. */
function tools(names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of names) {
    const p = ["/bin", "/usr/bin"].map((d) => path.join(d, n)).find((x) => fs.existsSync(x));
    if (p) out[`/bin/${n}`] = p;
  }
  return out;
}

/**
 * A rootfs of symlinks: each `path in the image → host path`, plus every shared library the
 * executables among them need (ldd), at its own path.
 */
async function linkRootfs(root: string, files: Record<string, string>): Promise<void> {
  fs.rmSync(root, { recursive: true, force: true });
  const all = { ...files };
  for (const host of Object.values(files)) {
    if (!fs.statSync(host).isFile()) continue;
    const { stdout } = await run("ldd", [host]).catch(() => ({ stdout: "" }));
    for (const m of stdout.matchAll(/(\/\S+)\s+\(0x/g)) all[m[1]!] = fs.realpathSync(m[1]!);
  }
  for (const d of ["tmp", "proc", "sys", "dev", "etc"]) fs.mkdirSync(path.join(root, d), { recursive: true });
  fs.chmodSync(path.join(root, "tmp"), 0o1777);
  for (const [inImage, host] of Object.entries(all)) {
    const p = path.join(root, inImage);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.symlinkSync(fs.realpathSync(host), p);
  }
}
