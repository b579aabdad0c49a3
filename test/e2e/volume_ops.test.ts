/**
 * Volume operations end to end, through the CLI against a real `berth agent -dev`, with csi-hostpath
 * (monolith, --attach-required, --call-log) under raw_exec so the test can look at its storage:
 * snapshot create/list/delete; volumes restored from a snapshot and cloned from a volume (data
 * copied); expansion of a volume a service job has mounted (ControllerExpandVolume, then
 * NodeExpandVolume); `volume detach`; `volume deregister -force`.
 *
 * Detach and forced deregister need a claim whose alloc has stopped but whose node step did not
 * happen. The test makes one for real: a process of its own sits in the published target, so the
 * node agent's NodeUnpublish fails ("target is busy") and the claim stays; once that process is
 * gone, the operator command has to finish the release.
 */
import assert from "node:assert/strict";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { mountsUnder } from "../../src/internal/mountinfo.js";
import { readCallLog, type CallRecord } from "../../src/csi/hostpath/call_log.js";
import { hostpathPluginJob } from "../builders/hostpath_plugin_job.js";
import {
  AgentProcess,
  eventually,
  freePort,
  getJson,
  killProcessesUnder,
  logTail,
  runCli,
} from "../helpers/agent_process.js";

const MiB = 1 << 20;
let dir: string;
let dataDir: string;
let agent: AgentProcess;
let addr: string;
let logFile: string;
const squatters: ChildProcess[] = [];
let passed = false;

const storage = () => path.join(dir, "storage");
const callLog = () => path.join(dir, "calls.jsonl");

interface VolumeView {
  ID: string;
  ExternalID: string;
  Capacity: number;
  SnapshotID: string;
  CloneID: string;
  WriteAllocs: Record<string, unknown> | null;
  ReadAllocs: Record<string, unknown> | null;
  PastClaims: Record<string, unknown>;
}
interface AllocView {
  ID: string;
  ClientStatus: string;
}
interface SnapshotView {
  ID: string;
  ExternalSourceVolumeID: string;
  IsReady: boolean;
  Secrets: unknown;
}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-vops-"));
  dataDir = path.join(dir, "data");
  logFile = path.join(dir, "agent.log");
  const port = await freePort();
  addr = `http://127.0.0.1:${port}`;
  agent = new AgentProcess(["-dev", "-data-dir", dataDir, "-http-addr", `127.0.0.1:${port}`], logFile);
  await eventually(
    "the dev node to be ready",
    async () => {
      const nodes = await getJson<{ Status: string }[]>(addr, "/v1/nodes");
      return nodes.some((n) => n.Status === "ready") ? true : undefined;
    },
    30_000,
  );
});

after(async () => {
  for (const s of squatters) s.kill("SIGKILL");
  agent?.kill();
  const leftovers = killProcessesUnder(dir);
  if (!passed || leftovers.length > 0)
    process.stderr.write(`--- agent log (tail) ---\n${logTail(logFile)}\n`);
  for (const m of (await mountsUnder(dir)).reverse()) {
    try {
      execFileSync("umount", ["-l", m]);
    } catch {
      /* already gone */
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

async function cli(args: string[]): Promise<string> {
  const r = await runCli(args, { BERTH_ADDR: addr });
  assert.equal(r.code, 0, `berth ${args.join(" ")}: ${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

/** Runs a command that must fail; answers its stderr. */
async function cliFails(args: string[]): Promise<string> {
  const r = await runCli(args, { BERTH_ADDR: addr });
  assert.equal(r.code, 1, `berth ${args.join(" ")} must fail: ${r.stdout}`);
  assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
  return r.stderr;
}

function writeFile(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

function volumeHcl(id: string, extra = "", min = "1MiB"): string {
  return writeFile(
    `${id}-${Date.now()}.hcl`,
    `id = "${id}"\nname = "${id}"\ntype = "csi"\nplugin_id = "hostpath"\ncapacity_min = "${min}"\n${extra}\ncapability {\n  access_mode = "single-node-writer"\n  attachment_mode = "file-system"\n}\n`,
  );
}

function serviceJob(id: string, volume: string): string {
  return writeFile(
    `${id}.hcl`,
    `job "${id}" {
  type = "service"
  group "g" {
    volume "data" {
      type            = "csi"
      source          = "${volume}"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "exec sleep 600"]
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
    }
  }
}
`,
  );
}

const volume = (id: string) => getJson<VolumeView>(addr, `/v1/volume/csi/${id}?claims=true`);
const claimCount = (v: VolumeView) =>
  Object.keys(v.ReadAllocs ?? {}).length +
  Object.keys(v.WriteAllocs ?? {}).length +
  Object.keys(v.PastClaims).length; // absent (no ?claims=true) must throw, not count 0
const callsOf = (ext: string): CallRecord[] => readCallLog(callLog()).filter((c) => c.volume_id === ext);
const okCalls = (ext: string, re: RegExp) =>
  callsOf(ext)
    .filter((c) => c.code === "OK" && re.test(c.method))
    .map((c) => c.method);

async function allocWith(job: string, status: string): Promise<AllocView> {
  return eventually(`${job} to be ${status}`, async () => {
    const allocs = await getJson<AllocView[]>(addr, `/v1/job/${job}/allocations`);
    if (allocs.some((a) => a.ClientStatus === "failed")) throw new Error(`${job} failed`);
    return allocs.length === 1 && allocs[0]!.ClientStatus === status ? allocs[0] : undefined;
  });
}

/** The host path where the volume with external ID `ext` is published for an alloc. */
async function publishedTarget(ext: string): Promise<string> {
  return eventually("the volume's publish target", async () => {
    const mounts = await mountsUnder(dataDir);
    return mounts.find((m) => m.includes("/per-alloc/") && fs.existsSync(path.join(m, ".marker-" + ext)));
  });
}

/**
 * Runs a service job on `vol`, stops it while a process of the test sits in the published target,
 * and waits until the alloc is complete with its claim stuck (NodeUnpublish failing). Answers a
 * function that ends the squatter.
 */
async function stuckClaim(job: string, vol: VolumeView): Promise<{ unsquat: () => void; allocId: string }> {
  await cli(["job", "run", serviceJob(job, vol.ID)]);
  await allocWith(job, "running");
  fs.writeFileSync(path.join(storage(), "volumes", vol.ExternalID, ".marker-" + vol.ExternalID), "");
  const target = await publishedTarget(vol.ExternalID);
  const squatter = spawn("sleep", ["600"], { cwd: target, stdio: "ignore" });
  squatters.push(squatter);
  await cli(["job", "stop", job]);
  const alloc = await allocWith(job, "complete");
  await eventually("the node agent's NodeUnpublish to fail on the busy target", async () =>
    callsOf(vol.ExternalID).some((c) => c.method === "NodeUnpublishVolume" && c.code !== "OK")
      ? true
      : undefined,
  );
  assert.ok(claimCount(await volume(vol.ID)) > 0, "the claim is still held");
  return {
    allocId: alloc.ID,
    unsquat: () => squatter.kill("SIGKILL"),
  };
}

/** The alloc's own release loop on the node agent has ended (it retried the busy unmount). */
async function nodeReleaseEnded(allocId: string): Promise<void> {
  await eventually("the node agent's own release of the alloc to end", async () =>
    fs
      .readFileSync(logFile, "utf8")
      .split("\n")
      .some((l) => l.includes("volumes released") && l.includes(`alloc=${allocId}`))
      ? true
      : undefined,
  );
}

/**
 * The last publish of the volume was released in CSI order and once: NodeUnpublish, NodeUnstage,
 * ControllerUnpublish, and nothing after it — also not from the node agent's own release loop,
 * which was still retrying when the operator command finished the release.
 */
function assertReleaseOrder(ext: string): void {
  const calls = okCalls(ext, /^(ControllerPublish|NodeUnpublish|NodeUnstage|ControllerUnpublish)Volume$/);
  const sinceLastPublish = calls.slice(calls.lastIndexOf("ControllerPublishVolume") + 1);
  assert.deepEqual(
    sinceLastPublish,
    ["NodeUnpublishVolume", "NodeUnstageVolume", "ControllerUnpublishVolume"],
    "release order",
  );
}

async function exited(pid: number | undefined): Promise<void> {
  await eventually("the squatter to exit", async () => {
    try {
      process.kill(pid ?? 0, 0);
      return undefined;
    } catch {
      return true;
    }
  });
}

test(
  "snapshots, restore, clone, expansion, detach and deregister -force through the CLI",
  { timeout: 120_000 },
  async () => {
    const args = [
      "--node-id=${node.unique.id}",
      "--attach-required",
      `--state-dir=${storage()}`,
      `--call-log=${callLog()}`,
    ];
    await cli([
      "job",
      "run",
      writeFile("plugin.hcl", hostpathPluginJob({ job: "hostpath", driver: "raw_exec", args })),
    ]);
    await eventually("the plugin to be healthy", async () => {
      const p = await getJson<{ ControllersHealthy: number; NodesHealthy: number }>(
        addr,
        "/v1/plugin/csi/hostpath",
      ).catch(() => undefined);
      return p && p.ControllersHealthy === 1 && p.NodesHealthy === 1 ? p : undefined;
    });
    const nodeId = (await getJson<{ ID: string }[]>(addr, "/v1/nodes"))[0]!.ID;

    // A source volume with data.
    await cli(["volume", "create", volumeHcl("src")]);
    const src = await volume("src");
    assert.equal(src.Capacity, MiB);
    fs.writeFileSync(path.join(storage(), "volumes", src.ExternalID, "data.txt"), "v1");

    // Snapshots: create (idempotent by name), list with and without -plugin, -json without secrets.
    const created = await cli(["volume", "snapshot", "create", "src", "nightly"]);
    const snapId = /Completed snapshot of volume src with snapshot ID (snap-[0-9a-f]+)\./.exec(created)?.[1];
    assert.ok(snapId, created);
    assert.match(created, /Snapshot ID\s+Volume ID\s+Size\s+Create Time\s+Ready\?/);
    assert.match(await cli(["volume", "snapshot", "create", "src", "nightly"]), new RegExp(snapId));
    assert.match(
      await cli(["volume", "snapshot", "list", "-plugin", "hostpath"]),
      // Nomad's table cuts the source volume's ID to 12 characters (30 with -verbose).
      new RegExp(`${snapId}\\s+${src.ExternalID.slice(0, 12)}\\s+1\\.0 MiB`),
    );
    const listed = JSON.parse(await cli(["volume", "snapshot", "list", "-json"])) as SnapshotView[];
    assert.deepEqual(
      listed.map((s) => [s.ID, s.ExternalSourceVolumeID, s.IsReady, s.Secrets]),
      [[snapId, src.ExternalID, true, null]],
    );
    assert.match(await cliFails(["volume", "snapshot", "create", "nope"]), /400.*SourceVolumeID/);
    assert.match(await cliFails(["volume", "snapshot", "list", "-plugin", "nope"]), /404/);

    // Restore from the snapshot and clone the source after it changed: the data is copied.
    fs.writeFileSync(path.join(storage(), "volumes", src.ExternalID, "data.txt"), "v2");
    await cli(["volume", "create", volumeHcl("restored", `snapshot_id = "${snapId}"`)]);
    await cli(["volume", "create", volumeHcl("cloned", `clone_id = "${src.ExternalID}"`)]);
    const restored = await volume("restored");
    const cloned = await volume("cloned");
    assert.equal(restored.SnapshotID, snapId);
    assert.equal(cloned.CloneID, src.ExternalID);
    const dataOf = (v: VolumeView) =>
      fs.readFileSync(path.join(storage(), "volumes", v.ExternalID, "data.txt"), "utf8");
    assert.equal(dataOf(restored), "v1", "restored from the snapshot");
    assert.equal(dataOf(cloned), "v2", "cloned from the volume");

    assert.match(
      await cli(["volume", "snapshot", "delete", "hostpath", snapId]),
      new RegExp(`Deleted snapshot ${snapId}`),
    );
    assert.match(await cli(["volume", "snapshot", "list", "-plugin", "hostpath"]), /No snapshots found/);
    assert.equal(fs.existsSync(path.join(storage(), "snapshots", snapId)), false);

    // The plugin's own volume list.
    const external = await getJson<{ Volumes: { ExternalID: string; PublishedExternalNodeIDs: string[] }[] }>(
      addr,
      "/v1/volumes/external?plugin_id=hostpath",
    );
    assert.deepEqual(
      external.Volumes.map((v) => v.ExternalID).sort(),
      [src.ExternalID, restored.ExternalID, cloned.ExternalID].sort(),
    );

    // Expansion while a service job has the volume mounted.
    await cli(["job", "run", serviceJob("user", "src")]);
    await allocWith("user", "running");
    await cli(["volume", "create", volumeHcl("src")]);
    assert.deepEqual(okCalls(src.ExternalID, /Expand/), [], "the same capacity expands nothing");
    await cli(["volume", "create", volumeHcl("src", "", "8MiB")]);
    assert.equal((await volume("src")).Capacity, 8 * MiB);
    assert.deepEqual(okCalls(src.ExternalID, /Expand/), ["ControllerExpandVolume", "NodeExpandVolume"]);
    assert.match(
      await cliFails(["volume", "create", volumeHcl("src", 'capacity_max = "2MiB"')]),
      /400.*RequestedCapacityMax.*cannot shrink/,
    );

    // Detach: refused while the job runs, then finishes a release the node could not.
    assert.match(await cliFails(["volume", "detach", "src", nodeId]), /409.*running allocation/);
    await cli(["job", "stop", "-purge", "user"]);
    await eventually("src's claim to be released", async () =>
      claimCount(await volume("src")) === 0 ? true : undefined,
    );

    const stuck = await volume("cloned");
    const first = await stuckClaim("stuck", stuck);
    const pid = squatters.at(-1)?.pid;
    first.unsquat();
    await exited(pid);
    assert.match(
      await cli(["volume", "detach", "cloned", nodeId.slice(0, 8)]),
      /Successfully detached volume "cloned"/,
    );
    assert.equal(claimCount(await volume("cloned")), 0, "detach answers once the claim is released");
    await nodeReleaseEnded(first.allocId);
    assertReleaseOrder(stuck.ExternalID);
    assert.match(await cli(["volume", "detach", "cloned", nodeId]), /Successfully detached/, "idempotent");
    assert.match(await cliFails(["volume", "detach", "cloned", "no-such-node"]), /404/);

    // deregister -force: refused while running; otherwise releases the claim, then deregisters.
    await cli(["job", "run", serviceJob("runner", "restored")]);
    await allocWith("runner", "running");
    assert.match(await cliFails(["volume", "deregister", "-force", "restored"]), /409.*running allocation/);
    await cli(["job", "stop", "-purge", "runner"]);
    await eventually("restored's claim to be released", async () =>
      claimCount(await volume("restored")) === 0 ? true : undefined,
    );
    const second = await stuckClaim("stuck2", restored);
    assert.match(await cliFails(["volume", "deregister", "restored"]), /409.*in use/);
    const pid2 = squatters.at(-1)?.pid;
    second.unsquat();
    await exited(pid2);
    await cli(["volume", "deregister", "-force", "restored"]);
    const after = await getJson<{ ID: string }[]>(addr, "/v1/volumes?type=csi");
    assert.deepEqual(after.map((v) => v.ID).sort(), ["cloned", "src"]);
    await nodeReleaseEnded(second.allocId);
    assertReleaseOrder(restored.ExternalID);
    const attachments = path.join(storage(), "attachments", restored.ExternalID);
    assert.deepEqual(fs.existsSync(attachments) ? fs.readdirSync(attachments) : [], [], "no attachment left");

    for (const job of ["stuck", "stuck2", "hostpath"]) await cli(["job", "stop", "-purge", job]);
    assert.equal(await agent.stop(60_000), 0, "agent exit code");
    assert.deepEqual(await mountsUnder(dir), [], "nothing is mounted under the test dir");
    passed = true;
  },
);
