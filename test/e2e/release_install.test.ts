/**
 * Issue 32: berth installed on a node from its release, offline. `npm pack` makes the tarball
 * (runtime dependencies bundled, the native SQLite module compiled for this platform among them);
 * `npm install -g --offline --ignore-scripts` installs it into a fresh prefix with no network and
 * no compiler; the installed `berth` then runs `agent -dev` with the package's own example config
 * and the README's quick start from a directory outside the repository: the hostpath plugin as an
 * exec task (which runs the installed `berth`), a volume, a writer job, its file in the volume,
 * stop, delete. After it: the agent stopped cleanly, nothing mounted, no process left.
 */
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { mountsUnder } from "../../src/internal/mountinfo.js";
import {
  eventually,
  findFiles,
  freePort,
  getJson,
  pluginHealthy,
  killProcessGroupsUnder,
  logTail,
  REPO_ROOT,
} from "../helpers/agent_process.js";

const run = promisify(execFile);

let dir: string;
let prefix: string;
let berth: string;
let pkg: string;
let addr: string;
let logFile: string;
let agent: ReturnType<typeof spawn> | undefined;
let passed = false;

before(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-release-")));
  prefix = path.join(dir, "prefix");
  // The repo's build is packed as is (`npm test` built it; `prepack` builds when a user packs).
  const packed = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], {
    cwd: REPO_ROOT,
    maxBuffer: 64 << 20,
  });
  const filename = (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename;
  await run(
    "npm",
    [
      "install",
      "-g",
      "--offline",
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      "--prefix",
      prefix,
      path.join(dir, filename),
    ],
    // Its own npm cache: nothing may come from the one `npm ci` filled.
    { cwd: dir, env: { ...process.env, npm_config_cache: path.join(dir, "npm-cache") } },
  );
  berth = path.join(prefix, "bin", "berth");
  pkg = path.join(prefix, "lib", "node_modules", "berth");
});

after(async () => {
  agent?.kill("SIGKILL");
  const left = killProcessGroupsUnder(dir);
  if (!passed) process.stderr.write(`agent log:\n${logTail(logFile, 60)}\n`);
  const mounts = await mountsUnder(dir);
  fs.rmSync(dir, { recursive: true, force: true });
  assert.deepEqual(left, [], "no process was left running");
  assert.deepEqual(mounts, [], "nothing was left mounted");
});

async function cli(...args: string[]): Promise<string> {
  const r = await run(berth, args, { cwd: dir, env: { ...process.env, BERTH_ADDR: addr, NOMAD_ADDR: "" } });
  return r.stdout;
}

test("the packed release installs offline into a fresh prefix and runs agent -dev and the quick start", async () => {
  assert.ok(
    fs.existsSync(
      path.join(pkg, "node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node"),
    ),
  );
  assert.ok(fs.existsSync(path.join(pkg, "packaging", "systemd", "berth-client.service")));
  assert.ok(!fs.existsSync(path.join(pkg, "dist", "test")), "the tests are not shipped");
  assert.ok(!fs.existsSync(path.join(pkg, "src")), "nor the TypeScript sources");

  const port = await freePort();
  addr = `http://127.0.0.1:${port}`;
  logFile = path.join(dir, "agent.log");
  const log = fs.openSync(logFile, "a");
  const dataDir = path.join(dir, "data");
  agent = spawn(
    berth,
    [
      "agent",
      "-dev",
      "-config",
      path.join(pkg, "examples/hostpath/agent.hcl"),
      "-data-dir",
      dataDir,
      "-http-addr",
      `127.0.0.1:${port}`,
    ],
    { cwd: dir, stdio: ["ignore", log, log], detached: true },
  );
  fs.closeSync(log);
  const exited = new Promise<number | null>((resolve) => agent!.once("exit", (code) => resolve(code)));
  await eventually("the dev node to be ready", async () => {
    const nodes = await getJson<{ Status: string }[]>(addr, "/v1/nodes").catch(() => []);
    return nodes.some((n) => n.Status === "ready") ? true : undefined;
  });

  const examples = path.join(pkg, "examples", "hostpath");
  await cli("job", "run", "-detach", path.join(examples, "plugin.hcl"));
  await pluginHealthy(addr);
  await cli("volume", "create", path.join(examples, "volume.hcl"));
  await cli("job", "run", "-detach", path.join(examples, "job.hcl"));
  await eventually(
    "the writer to complete",
    async () => {
      const allocs = await getJson<{ ClientStatus: string }[]>(addr, "/v1/job/writer/allocations");
      if (allocs.some((a) => a.ClientStatus === "failed")) throw new Error("the writer failed");
      return allocs.some((a) => a.ClientStatus === "complete") ? true : undefined;
    },
    60_000,
  );
  const written = findFiles(dataDir, "hello.txt");
  assert.equal(written.length, 1, "hello.txt in the plugin's storage");
  assert.equal(fs.readFileSync(written[0]!, "utf8"), "hello\n");
  await cli("job", "stop", "-purge", "writer");
  await eventually("the volume to be free", async () => {
    const v = await getJson<{ ReadAllocs: object; WriteAllocs: object }>(addr, "/v1/volume/csi/demo");
    return Object.keys(v.WriteAllocs ?? {}).length === 0 ? true : undefined;
  });
  await cli("volume", "delete", "demo");

  // Ctrl-C: -dev stops every alloc and releases every volume.
  process.kill(agent.pid!, "SIGINT");
  assert.equal(await exited, 0, "the agent stopped cleanly");
  passed = true;
});
