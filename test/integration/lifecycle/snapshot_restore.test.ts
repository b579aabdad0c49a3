/**
 * Issue 32 item 2 with real processes: a `berth agent -server` (A) and a `-client` node agent,
 * csi-hostpath as a plugin job, a volume with secrets claimed by a running job (its claim and
 * mounts in place), the real CLI.
 *
 * 1. `operator snapshot save` while the claim is held; `inspect` reads the file offline.
 * 2. A stops. A new server B on a new data dir: a restore is refused while B's keyring cannot open
 *    the snapshot's secrets (nothing changes); with A's key file copied into B's keystore it
 *    succeeds, and B shows every job, the volume and its claim as A had them at the snapshot.
 * 3. The node agent is restarted against B (its tasks ran on meanwhile): the node is ready, the
 *    claimed alloc still runs, and the volume is usable — the job stopped releases the claim
 *    cleanly, a new job claims it and sees the first job's file, and once everything stops
 *    nothing is left mounted.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after } from "node:test";
import { AgentProcess, eventually, freePort, runCli } from "../../helpers/agent_process.js";
import { mountsUnder } from "../../helpers/mounts.js";
import {
  allocOf,
  claimCount,
  Cli,
  pluginAndVolume,
  SplitAgents,
  Steps,
  writeSpecs,
  type VolumeView,
} from "../restart/restart_fixtures.js";

const SLEEP = 86_417;
const SECRET = "snapshot-secret-never-in-clear";
const agents = new SplitAgents("snapshot-restore");
const steps = new Steps();
const file = path.join(agents.dir, "backup.snap");
const serverB = path.join(agents.dir, "server-b");
let b: AgentProcess | null = null;
let cliB: Cli;
let held: { allocId: string; volIndex: number };
/** A's jobs (see `jobs`) read right after the save. */
let jobsA = new Map<string, string>();

after(async () => {
  await b?.stop(30_000).catch(() => undefined);
  await agents.cleanUp(steps.failed, SLEEP);
});

const volume = (cli: Cli) => cli.get<VolumeView>("/v1/volume/csi/vol1?claims=true");
/** Job ID → its CreateIndex, JobModifyIndex (moved by a submission only) and Version. */
const jobs = async (cli: Cli) =>
  new Map(
    (
      (await cli.get<{ ID: string; CreateIndex: number; JobModifyIndex: number; Version?: number }[]>(
        "/v1/jobs",
      )) ?? []
    ).map((j) => [j.ID, `${j.CreateIndex}/${j.JobModifyIndex}/${j.Version ?? 0}`]),
  );

steps.step("a server, a node, csi-hostpath, a volume with secrets claimed by a running job", async () => {
  await agents.start();
  await agents.nodeReady();
  const specs = writeSpecs(agents.dir, SLEEP);
  fs.appendFileSync(specs.volume, `secrets {\n  token = "${SECRET}"\n}\n`);
  await pluginAndVolume(agents.cli, specs);
  await agents.cli.run(["job", "run", specs.app]);
  const alloc = await allocOf(agents.cli, "app", "running");
  const vol = (await volume(agents.cli))!;
  assert.deepEqual(Object.keys(vol.WriteAllocs), [alloc.ID]);
  held = { allocId: alloc.ID, volIndex: vol.ModifyIndex };
});

steps.step("save while the claim is held; inspect offline", async () => {
  const out = await agents.cli.run(["operator", "snapshot", "save", file]);
  assert.equal(out.trim(), `State file written to ${file}`);
  assert.ok(!fs.readFileSync(file).includes(SECRET));
  const inspect = await runCli(["operator", "snapshot", "inspect", file], {
    BERTH_ADDR: "http://127.0.0.1:1",
  });
  assert.equal(inspect.code, 0, inspect.stderr);
  assert.match(inspect.stdout, /^Mode\s+= sqlite$/m);
  assert.match(inspect.stdout, /^CSIVolume\s+1\s/m);
  assert.match(inspect.stdout, /^Job\s+2\s/m);
  jobsA = await jobs(agents.cli);
});

steps.step("a fresh server restores it once it holds the saving server's key", async () => {
  await agents.server!.stop(30_000);
  const port = await freePort();
  cliB = new Cli(`http://127.0.0.1:${port}`);
  b = new AgentProcess(["-server", "-data-dir", serverB, "-http-addr", `127.0.0.1:${port}`], agents.logFile);
  await eventually("server B to answer", () => cliB.get<unknown[]>("/v1/nodes"));

  const refused = await runCli(["operator", "snapshot", "restore", file], cliB.env);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /400.*its secrets are sealed with key .* which the keystore .* does not hold/);
  assert.ok(!refused.stderr.includes(SECRET));
  assert.equal((await jobs(cliB)).size, 0, "nothing changed");

  const keystoreA = path.join(agents.dir, "server", "server", "keystore");
  for (const f of fs.readdirSync(keystoreA)) {
    fs.copyFileSync(path.join(keystoreA, f), path.join(serverB, "server", "keystore", f));
  }
  assert.equal((await cliB.run(["operator", "snapshot", "restore", file])).trim(), "Snapshot Restored");
  // Every job A had, as its submitter made it (B's leader may have moved a job's status since).
  const jobsB = await jobs(cliB);
  assert.deepEqual([...jobsB.keys()].sort(), [...jobsA.keys()].sort());
  for (const [id, specA] of jobsA) assert.equal(jobsB.get(id), specA, `job ${id}`);
  const vol = (await volume(cliB))!;
  assert.equal(vol.ModifyIndex, held.volIndex);
  assert.deepEqual(Object.keys(vol.WriteAllocs), [held.allocId]);
});

steps.step("the node agent moves to B: its claim is released cleanly and the volume is usable", async () => {
  await agents.client!.stop(30_000);
  agents.client = new AgentProcess(
    ["-client", "-data-dir", agents.clientDir, `-servers=${new URL(cliB.addr).host}`],
    agents.logFile,
  );
  await eventually("the node to be ready on B", async () => {
    const nodes = await cliB.get<{ Status: string }[]>("/v1/nodes");
    return nodes?.length === 1 && nodes[0]!.Status === "ready" ? true : undefined;
  });
  const alloc = await allocOf(cliB, "app", "running");
  assert.equal(alloc.ID, held.allocId, "the claimed alloc ran on through the move");

  await cliB.run(["job", "stop", "-purge", "app"]);
  await eventually(
    "the claim to be released",
    async () => {
      const v = await volume(cliB);
      return v && claimCount(v) === 0 ? true : undefined;
    },
    60_000,
  );
  const next = path.join(agents.dir, "next.hcl");
  fs.writeFileSync(
    next,
    fs
      .readFileSync(path.join(agents.dir, "app.hcl"), "utf8")
      .replace('job "app"', 'job "next"')
      .replace("echo hi > /data/x; exec sleep", "test -f /data/x && exec sleep"),
  );
  await cliB.run(["job", "run", next]);
  const claimed = await allocOf(cliB, "next", "running");
  assert.deepEqual(Object.keys((await volume(cliB))!.WriteAllocs), [claimed.ID]);

  await cliB.run(["job", "stop", "-purge", "next"]);
  await eventually(
    "the second claim to be released",
    async () => {
      const v = await volume(cliB);
      return v && claimCount(v) === 0 ? true : undefined;
    },
    60_000,
  );
  await cliB.run(["volume", "delete", "vol1"]);
  await cliB.run(["job", "stop", "-purge", "plugin"]);
  await eventually(
    "nothing mounted under the data dirs",
    async () => ((await mountsUnder(agents.dir)).length === 0 ? true : undefined),
    60_000,
  );
});
