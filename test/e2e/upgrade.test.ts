/**
 * Issue 32: an upgrade in the documented order — servers first, then clients — from the previous
 * release (test/fixtures/release-0.1.0: that release's compiled tree, run on this repo's
 * node_modules) to this one, with a volume claimed by a running task the whole time:
 * 1. a 0.1.0 server and a 0.1.0 client run the hostpath plugin and a service that holds `demo`;
 * 2. the server is replaced by this release on the same data dir (its state DB migrates); the old
 *    client reconnects, keeps its task, and still runs new work the new server places on it;
 * 3. the client is replaced on the same data dir (its state DB migrates); the task is restored, not
 *    restarted, and its volume stays mounted; then the volume is released and deleted cleanly.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { mountsUnder } from "../../src/internal/mountinfo.js";
import {
  AgentProcess,
  eventually,
  findFiles,
  freePort,
  getJson,
  pluginHealthy,
  killProcessGroupsUnder,
  logTail,
  REPO_ROOT,
  runCli,
} from "../helpers/agent_process.js";
import { PREVIOUS_RELEASE, unpackPreviousRelease } from "../helpers/previous_release.js";

const PREVIOUS = PREVIOUS_RELEASE;
/** The holder's `sleep` argument, which finds its process on the host. */
const MARK = "3599.25";
const examples = path.join(REPO_ROOT, "examples", "hostpath");

let dir: string;
let oldBin: string;
const agents: AgentProcess[] = [];
let passed = false;

before(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-upgrade-")));
  oldBin = unpackPreviousRelease(dir);
});

after(async () => {
  for (const a of agents) a.kill();
  const left = killProcessGroupsUnder(dir);
  if (!passed) {
    for (const log of ["server-old.log", "server-new.log", "client-old.log", "client-new.log"]) {
      process.stderr.write(`${log}:\n${logTail(path.join(dir, log), 40)}\n`);
    }
  }
  const mounts = await mountsUnder(dir);
  // A run cut short leaves the client's mounts (a client agent's stop leaves its tasks running).
  for (const m of mounts) execFileSync("umount", ["-l", m], { stdio: "ignore" });
  fs.rmSync(dir, { recursive: true, force: true });
  assert.deepEqual(mounts, [], "nothing was left mounted");
  assert.deepEqual(left, [], "no process was left running");
});

function server(bin: string | undefined, port: number, log: string): AgentProcess {
  const args = ["-server", "-data-dir", path.join(dir, "server"), "-http-addr", `127.0.0.1:${port}`];
  const a = new AgentProcess(args, path.join(dir, log), {}, { bin });
  agents.push(a);
  return a;
}

function client(bin: string | undefined, port: number, log: string): AgentProcess {
  const args = [
    "-client",
    "-data-dir",
    path.join(dir, "client"),
    `-servers=127.0.0.1:${port}`,
    "-node-name=n1",
    "-config",
    path.join(examples, "agent.hcl"),
  ];
  const a = new AgentProcess(args, path.join(dir, log), {}, { bin });
  agents.push(a);
  return a;
}

/** Host PIDs of the holder's task process. */
function holderPids(): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (argv.includes(MARK) && path.basename(argv[0] ?? "") === "sleep") pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

interface Alloc {
  ID: string;
  ClientStatus: string;
  TaskStates?: Record<string, { StartedAt: string; Restarts: number }>;
}
interface NodeStub {
  Name: string;
  Status: string;
}

test(`an upgrade from ${PREVIOUS}, servers then clients, keeps jobs, claims and running tasks`, async () => {
  const port = await freePort();
  const addr = `http://127.0.0.1:${port}`;
  const cli = async (...args: string[]) => {
    const r = await runCli(args, { BERTH_ADDR: addr, NOMAD_ADDR: "" });
    assert.equal(r.code, 0, `berth ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  const nodeReady = () =>
    eventually("node n1 to be ready", async () => {
      const nodes = await getJson<NodeStub[]>(addr, "/v1/nodes").catch(() => []);
      return nodes.some((n) => n.Name === "n1" && n.Status === "ready") ? true : undefined;
    });
  const allocsOf = (job: string) => getJson<Alloc[]>(addr, `/v1/job/${job}/allocations`);
  const runningAlloc = (job: string) =>
    eventually(
      `${job} to run`,
      async () => (await allocsOf(job).catch(() => [])).find((a) => a.ClientStatus === "running"),
      60_000,
    );

  // 1. The previous release, server and client.
  const oldServer = server(oldBin, port, "server-old.log");
  const oldClient = client(oldBin, port, "client-old.log");
  await nodeReady();
  await cli("job", "run", path.join(examples, "plugin.hcl"));
  await pluginHealthy(addr);
  await cli("volume", "create", path.join(examples, "volume.hcl"));
  const holderSpec = path.join(dir, "holder.hcl");
  fs.writeFileSync(
    holderSpec,
    fs
      .readFileSync(path.join(examples, "job.hcl"), "utf8")
      .replace('job "writer"', 'job "holder"')
      .replace('type = "batch"', 'type = "service"')
      .replace("echo hello > /data/hello.txt", `echo before > /data/upgrade.txt; exec sleep ${MARK}`),
  );
  await cli("job", "run", holderSpec);
  const holder = await runningAlloc("holder");
  const startedAt = holder.TaskStates?.writer?.StartedAt;
  assert.ok(startedAt, "the holder's task has started");
  const pids = await eventually("the holder's process", () => {
    const found = holderPids();
    return Promise.resolve(found.length > 0 ? found : undefined);
  });
  assert.equal(pids.length, 1);

  // 2. Servers first: the new release opens (and migrates) the old one's state DB.
  assert.equal(await oldServer.stop(), 0, "the old server stopped cleanly");
  server(undefined, port, "server-new.log");
  await nodeReady();
  assert.deepEqual(
    await getJson<unknown[]>(addr, "/v1/operator/quarantine"),
    [],
    "every record of the old release's state passed the load-time checks",
  );
  const volume = await getJson<{ WriteAllocs: Record<string, unknown> }>(addr, "/v1/volume/csi/demo");
  assert.deepEqual(Object.keys(volume.WriteAllocs), [holder.ID], "the claim came through the upgrade");
  assert.equal((await runningAlloc("holder")).ID, holder.ID);
  // The old client runs what the new server places on it.
  const batchSpec = path.join(dir, "batch.hcl");
  fs.writeFileSync(
    batchSpec,
    'job "after" {\n  type = "batch"\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n' +
      '      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n',
  );
  await cli("job", "run", batchSpec);
  await eventually(
    "the old client to run the new server's batch job",
    async () => ((await allocsOf("after")).some((a) => a.ClientStatus === "complete") ? true : undefined),
    60_000,
  );

  // 3. Then clients: the new release restores the old one's allocs from its (migrated) state DB.
  assert.equal(await oldClient.stop(), 0, "the old client stopped, leaving its tasks running");
  client(undefined, port, "client-new.log");
  await nodeReady();
  await eventually(
    "the new client to report the holder restored",
    async () => {
      const a = (await allocsOf("holder")).find((x) => x.ID === holder.ID);
      return a?.ClientStatus === "running" && a.TaskStates?.writer?.StartedAt === startedAt ? a : undefined;
    },
    30_000,
  );
  const restored = (await allocsOf("holder")).find((x) => x.ID === holder.ID);
  assert.equal(restored?.TaskStates?.writer?.Restarts, 0, "restored, not restarted");
  assert.deepEqual(holderPids(), pids, "the same process, and no second one");
  assert.ok((await mountsUnder(path.join(dir, "client"))).length > 0, "the holder's volume is still mounted");
  // In the plugin's storage (the volume's mounts show the same file again).
  const written = findFiles(path.join(dir, "client"), "upgrade.txt").filter((f) =>
    f.includes("hostpath-data"),
  );
  assert.equal(written.length, 1);
  assert.equal(fs.readFileSync(written[0]!, "utf8"), "before\n");

  // The new client releases what the old one claimed.
  await cli("job", "stop", "-purge", "holder");
  await eventually("the volume to be free", async () => {
    const v = await getJson<{ WriteAllocs: Record<string, unknown> }>(addr, "/v1/volume/csi/demo");
    return Object.keys(v.WriteAllocs).length === 0 ? true : undefined;
  });
  await cli("volume", "delete", "demo");
  await cli("job", "stop", "-purge", "plugin");
  await eventually(
    "the plugin to stop",
    async () => ((await allocsOf("plugin")).every((a) => a.ClientStatus !== "running") ? true : undefined),
    30_000,
  ).catch(() => undefined);
  for (const a of agents) assert.equal(await a.stop(), 0);
  passed = true;
});
