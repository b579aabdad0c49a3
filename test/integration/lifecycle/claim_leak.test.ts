/**
 * Issue 28 item 6 with real processes: a `berth agent -server -client`, csi-hostpath as a raw_exec
 * job with `--attach-required`, `--faults` and a call log, real bind mounts, the CLI.
 *
 * 1. A claim whose answer never reaches its node: ControllerPublishVolume attaches, then holds its
 *    answer (the fault's answerAfterMs); the job is stopped meanwhile, so the node agent abandons
 *    its claim call and the alloc completes without a task — the server holds a `taken`, attached
 *    claim nobody would release (before issue 28: forever). The volumewatcher asks the node
 *    (ClientCSI.NodeVolumeState, answered from the agent's state DB), which holds nothing of it,
 *    and releases it: ControllerUnpublishVolume in the plugin's call log, the claim gone, a
 *    CSIVolumeClaimOrphanRelease event on the stream, a log line. No NodeStage/NodePublish ever.
 * 2. A node that still holds the volume for a finished alloc (NodeUnpublishVolume failing, so its
 *    release stays pending) keeps the claim waiting: the node is asked and answers, and nothing
 *    is released behind its back. Then `volume detach` by node NAME (CLI and HTTP) finishes it.
 * The file ends asserting nothing is left mounted.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { readCallLog, type CallRecord } from "../../../src/csi/hostpath/call_log.js";
import { hostpathPluginJob } from "../../builders/hostpath_plugin_job.js";
import { AgentProcess, eventually, freePort, runCli } from "../../helpers/agent_process.js";
import { mountsUnder } from "../../helpers/mounts.js";
import { openStream, type OpenStream } from "../server/event_client.js";
import { Cli, allocOf, cleanUp, keepLogIfFailed, Steps } from "../restart/restart_fixtures.js";

const SLEEP = 86_413;
const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-claim-leak-")));
const dataDir = path.join(dir, "data");
const logFile = path.join(dir, "agent.log");
const steps = new Steps();
let agent: AgentProcess | null = null;
let cli: Cli;
let externalId = "";
let nodeName = "";
let stream: OpenStream | undefined;

type Claim = { AllocationID: string; State: string; ReleaseStatus?: { Step: string } | null };
interface Volume {
  ExternalID: string;
  WriteClaims: Record<string, Claim>;
  ReadClaims: Record<string, Claim>;
  PastClaims: Record<string, Claim>;
}

const faultsFile = () => path.join(dir, "faults.json");
function setFaults(faults: object): void {
  fs.writeFileSync(faultsFile() + ".tmp", JSON.stringify(faults));
  fs.renameSync(faultsFile() + ".tmp", faultsFile());
}
const calls = (): CallRecord[] =>
  readCallLog(path.join(dir, "calls.jsonl")).filter((c) => c.volume_id === externalId);
const line = (c: CallRecord) => `${c.method}:${c.code}`;
const volume = async () => (await cli.get<Volume>("/v1/volume/csi/vol?claims=true"))!;
const claimsOf = (v: Volume) => [
  ...Object.values(v.WriteClaims),
  ...Object.values(v.ReadClaims),
  ...Object.values(v.PastClaims),
];
const agentLog = () => fs.readFileSync(logFile, "utf8");

function appJob(id: string): string {
  return `job "${id}" {
  group "g" {
    volume "data" {
      type            = "csi"
      source          = "vol"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo ${id} >> /data/log.txt && exec sleep ${SLEEP}"]
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
    }
  }
}
`;
}

after(async () => {
  stream?.close();
  try {
    if (agent) await agent.stop(60_000);
  } finally {
    keepLogIfFailed(steps.failed, logFile, "berth-claim-leak.log");
    const left = await cleanUp([dir], SLEEP);
    assert.deepEqual(left.mounts, [], "nothing was left mounted after the agent stopped");
  }
});

steps.step("an agent, csi-hostpath with --attach-required, a single-node-writer volume", async () => {
  const port = await freePort();
  cli = new Cli(`http://127.0.0.1:${port}`);
  agent = new AgentProcess(
    ["-server", "-client", "-data-dir", dataDir, "-http-addr", `127.0.0.1:${port}`],
    logFile,
  );
  nodeName = await eventually("the node to be ready", async () => {
    const nodes = await cli.get<{ Status: string; Name: string }[]>("/v1/nodes");
    return nodes?.find((n) => n.Status === "ready")?.Name;
  });
  const plugin = path.join(dir, "plugin.hcl");
  fs.writeFileSync(
    plugin,
    hostpathPluginJob({
      driver: "raw_exec",
      args: [
        "--node-id=n1",
        "--attach-required",
        `--state-dir=${path.join(dir, "storage")}`,
        `--faults=${faultsFile()}`,
        `--call-log=${path.join(dir, "calls.jsonl")}`,
      ],
    }),
  );
  await cli.run(["job", "run", plugin]);
  await eventually("plugin hostpath to be healthy", async () => {
    const p = await cli.get<{ NodesHealthy: number; ControllersHealthy: number }>("/v1/plugin/csi/hostpath");
    return p && p.NodesHealthy >= 1 && p.ControllersHealthy >= 1 ? p : undefined;
  });
  await allocOf(cli, "plugin", "running");
  const spec = path.join(dir, "vol.hcl");
  fs.writeFileSync(
    spec,
    `id = "vol"\nname = "vol"\ntype = "csi"\nplugin_id = "hostpath"\ncapability {\n  access_mode     = "single-node-writer"\n  attachment_mode = "file-system"\n}\n`,
  );
  await cli.run(["volume", "create", spec]);
  externalId = (await volume()).ExternalID;
});

steps.step(
  "a claim whose answer never reached its node is released by the watcher, controller step included",
  async () => {
    const index = Number((await fetch(`${cli.addr}/v1/volume/csi/vol`)).headers.get("x-nomad-index"));
    stream = await openStream(cli.addr, `?topic=CSIVolume:vol&index=${index}`);
    // The publish attaches at once and answers 12 s later: the window in which the caller goes away.
    setFaults({ ControllerPublishVolume: { answerAfterMs: 12_000, times: 1 } });
    await cli.run(["job", "run", "-detach", writeJob("leak")]);
    const claimed = await eventually("the claim to be committed", async () => {
      const c = claimsOf(await volume());
      return c.length === 1 ? c[0] : undefined;
    });
    // The node agent abandons its claim call with the alloc: it never learns it holds the volume.
    await cli.run(["job", "stop", "leak"]);
    const done = await allocOf(cli, "leak", "complete");
    assert.equal(done.ID, claimed.AllocationID);
    assert.equal(claimsOf(await volume())[0]?.State, "taken", "the server still holds the claim");

    await eventually("the leaked claim to be released", async () =>
      claimsOf(await volume()).length === 0 ? true : undefined,
    );
    const made = calls().map(line);
    assert.ok(made.includes("ControllerPublishVolume:OK"), made.join(", "));
    assert.ok(
      made.indexOf("ControllerUnpublishVolume:OK") > made.indexOf("ControllerPublishVolume:OK"),
      `the attachment was undone: ${made.join(", ")}`,
    );
    assert.ok(
      !made.some((m) => m.startsWith("Node")),
      `the node never staged or published it: ${made.join(", ")}`,
    );
    const events = stream.frames.flatMap((f) => f.Events ?? []);
    const orphan = events.find((e) => e.Type === "CSIVolumeClaimOrphanRelease");
    assert.ok(orphan, `an orphan-release event: ${events.map((e) => e.Type).join(", ")}`);
    assert.equal(orphan.Key, "vol");
    assert.equal(
      orphan.Payload.Volume.WriteClaims[claimed.AllocationID]?.ReleaseStatus?.Step,
      "orphan-release",
    );
    assert.match(agentLog(), /releasing a claim its node never used/);
  },
);

steps.step(
  "a node that still holds the volume for a finished alloc keeps its claim waiting; detach by node name",
  async () => {
    setFaults({ NodeUnpublishVolume: { code: "INTERNAL", times: 1_000_000 } });
    await cli.run(["job", "run", "-detach", writeJob("holder")]);
    const holder = await allocOf(cli, "holder", "running");
    await cli.run(["job", "stop", "holder"]);
    await allocOf(cli, "holder", "complete");
    const mark = calls().length;
    // Past the orphan grace the watcher asks the node, which answers that its release is pending.
    await eventually(
      "the watcher to ask the node and hear it still holds the claim",
      async () =>
        agentLog()
          .split("\n")
          .some((l) => l.includes("still held on its live node") && l.includes(holder.ID))
          ? true
          : undefined,
      60_000,
    );
    await sleep(2_000);
    const c = claimsOf(await volume());
    assert.deepEqual(
      c.map((x) => [x.AllocationID, x.State]),
      [[holder.ID, "taken"]],
      "nothing released behind the node's back",
    );
    assert.ok(
      !calls()
        .slice(mark)
        .some((x) => x.method === "ControllerUnpublishVolume"),
      "no ControllerUnpublish while the node still has it mounted",
    );

    // The plugin recovers; the operator names the node by its name.
    setFaults({});
    const out = await cli.run(["volume", "detach", "vol", nodeName]);
    assert.match(out, /Successfully detached volume "vol"/);
    assert.equal(claimsOf(await volume()).length, 0);
    const http = await fetch(`${cli.addr}/v1/volume/csi/vol/detach?node=${encodeURIComponent(nodeName)}`, {
      method: "DELETE",
    });
    assert.equal(http.status, 200, await http.text());
    const bad = await runCli(["volume", "detach", "vol", "no-such-node"], cli.env);
    assert.notEqual(bad.code, 0);
    const made = calls().slice(mark).map(line);
    assert.ok(
      made.lastIndexOf("ControllerUnpublishVolume:OK") > made.lastIndexOf("NodeUnpublishVolume:OK"),
      `unmounted, then detached: ${made.join(", ")}`,
    );
  },
);

steps.step("the plugin stops: its directory is torn down, nothing is left mounted", async () => {
  for (const job of ["leak", "holder"]) await cli.run(["job", "stop", "-purge", job]);
  await cli.run(["volume", "delete", "vol"]);
  await cli.run(["job", "stop", "-purge", "plugin"]);
  await eventually("nothing mounted under the data dir", async () =>
    (await mountsUnder(dataDir)).length === 0 ? true : undefined,
  );
});

/** Writes the app job `id` and answers its file. */
function writeJob(id: string): string {
  const file = path.join(dir, `${id}.hcl`);
  fs.writeFileSync(file, appJob(id));
  return file;
}
