/**
 * Issue 8, items 7 and 8, with real processes: a `berth agent -server -client`, the csi-hostpath
 * plugin as an exec job with `--faults` and `--report-capacity-zero`, real bind mounts, the CLI.
 *
 * 1. Capacity 0 means "unknown": the same volume spec applied twice through a plugin that reports
 *    capacity 0 succeeds both times, and `volume status` says "unknown".
 * 2. A release stuck because the node plugin fails NodeUnpublishVolume is visible: the claim's
 *    ReleaseStatus in `GET /v1/volume/csi/:id`, a "Releases" section in `berth volume status`, and
 *    a "Volume Release Retry" task event; once the plugin succeeds the claim is freed and the
 *    status gone.
 * 3. A purged plugin job's plugin leaves `GET /v1/plugins?type=csi` once its instance is gone.
 * The file ends asserting nothing is left mounted.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after } from "node:test";
import { mountsUnder } from "../../helpers/mounts.js";
import { hostpathPluginJob } from "../../builders/hostpath_plugin_job.js";
import { AgentProcess, eventually, freePort, runCli } from "../../helpers/agent_process.js";
import {
  Cli,
  allocOf,
  callLog,
  claimCount,
  cleanUp,
  keepLogIfFailed,
  Steps,
  type AllocView,
  type VolumeView,
} from "../restart/restart_fixtures.js";

const SLEEP = 86_407;
const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-visible-")));
const dataDir = path.join(dir, "data");
const logFile = path.join(dir, "agent.log");
const steps = new Steps();
let agent: AgentProcess | null = null;
let cli: Cli;
let pluginAllocId = "";

interface ReleaseStatus {
  Step: string;
  LastError: string;
  Attempts: number;
  NextAttempt: number;
}
type Claim = { AllocationID: string; State: string; ReleaseStatus?: ReleaseStatus | null };
type Volume = VolumeView & {
  Capacity: number;
  RequestedCapacityMin: number;
  WriteClaims: Record<string, Claim>;
  PastClaims: Record<string, Claim>;
};

const faultsFile = () => path.join(dataDir, "alloc", pluginAllocId, "alloc", "faults.json");
function setFaults(faults: object): void {
  fs.writeFileSync(faultsFile() + ".tmp", JSON.stringify(faults));
  fs.renameSync(faultsFile() + ".tmp", faultsFile());
}

after(async () => {
  try {
    if (agent) await agent.stop(60_000);
  } finally {
    keepLogIfFailed(steps.failed, logFile, "berth-visible-release.log");
    const left = await cleanUp([dir], SLEEP);
    assert.deepEqual(left.mounts, [], "nothing was left mounted after the agent stopped");
  }
});

steps.step("an agent and the hostpath plugin reporting capacity 0", async () => {
  const port = await freePort();
  cli = new Cli(`http://127.0.0.1:${port}`);
  agent = new AgentProcess(
    ["-server", "-client", "-data-dir", dataDir, "-http-addr", `127.0.0.1:${port}`],
    logFile,
  );
  await eventually("the node to be ready", async () => {
    const nodes = await cli.get<{ Status: string }[]>("/v1/nodes");
    return nodes?.some((n) => n.Status === "ready") ? true : undefined;
  });
  const plugin = path.join(dir, "plugin.hcl");
  fs.writeFileSync(
    plugin,
    hostpathPluginJob({
      args: [
        "--node-id=n1",
        "--state-dir=/alloc/hostpath",
        "--faults=/alloc/faults.json",
        "--call-log=/alloc/calls.jsonl",
        "--report-capacity-zero",
      ],
    }),
  );
  await cli.run(["job", "run", plugin]);
  await eventually("plugin hostpath to be healthy", async () => {
    const p = await cli.get<{ NodesHealthy: number; ControllersHealthy: number }>("/v1/plugin/csi/hostpath");
    return p && p.NodesHealthy >= 1 && p.ControllersHealthy >= 1 ? p : undefined;
  });
  pluginAllocId = (await allocOf(cli, "plugin", "running")).ID;
});

steps.step("capacity 0: the same volume spec applied twice succeeds both times", async () => {
  const spec = path.join(dir, "vol.hcl");
  fs.writeFileSync(
    spec,
    `id = "vol"
name = "vol"
type = "csi"
plugin_id = "hostpath"
capacity_min = "10MiB"
capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}
`,
  );
  const first = await runCli(["volume", "create", spec], cli.env);
  assert.equal(first.code, 0, first.stderr);
  const second = await runCli(["volume", "create", spec], cli.env);
  assert.equal(second.code, 0, `applying the unchanged spec again is not an expansion: ${second.stderr}`);
  const controllerCalls = callLog(dataDir, pluginAllocId)
    .map((c) => c.method)
    .filter((m) => m.startsWith("Controller") || m === "CreateVolume");
  assert.deepEqual(
    controllerCalls.filter((m) => m !== "ControllerGetCapabilities"),
    ["CreateVolume"],
    "the second apply is a no-op: no second CreateVolume, no ControllerExpandVolume",
  );
  const vol = (await cli.get<Volume>("/v1/volume/csi/vol?claims=true"))!;
  assert.deepEqual([vol.Capacity, vol.RequestedCapacityMin], [0, 10 * 1024 * 1024]);
  assert.match(await cli.run(["volume", "status", "vol"]), /^Capacity\s+= unknown$/m);

  // A larger capacity_min still expands; the answer (0) keeps the capacity unknown, and the
  // larger spec applied again is a no-op in turn.
  fs.writeFileSync(spec, fs.readFileSync(spec, "utf8").replace('"10MiB"', '"20MiB"'));
  await cli.run(["volume", "create", spec]);
  await cli.run(["volume", "create", spec]);
  const expands = callLog(dataDir, pluginAllocId).filter((c) => c.method === "ControllerExpandVolume");
  assert.equal(expands.length, 1, "one expansion for two applies of the larger spec");
  const grown = (await cli.get<Volume>("/v1/volume/csi/vol?claims=true"))!;
  assert.deepEqual([grown.Capacity, grown.RequestedCapacityMin], [0, 20 * 1024 * 1024]);
});

steps.step("a release stuck in NodeUnpublish is visible, then clears when the plugin recovers", async () => {
  setFaults({ NodeUnpublishVolume: { code: "INTERNAL", times: 1000 } });
  const job = path.join(dir, "writer.hcl");
  fs.writeFileSync(
    job,
    `job "writer" {
  type = "batch"
  group "w" {
    volume "data" {
      type            = "csi"
      source          = "vol"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }
    task "w" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo hello > /data/hello.txt"]
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
  await cli.run(["job", "run", job]);
  const alloc = await allocOf(cli, "writer", "complete");

  // The API: the claim says which step fails, with the plugin's error and the next attempt.
  const stuck = await eventually("the claim's release status", async () => {
    const v = await cli.get<Volume>("/v1/volume/csi/vol?claims=true");
    const c = v?.WriteClaims?.[alloc.ID] ?? v?.PastClaims?.[alloc.ID];
    return c?.ReleaseStatus ? c.ReleaseStatus : undefined;
  });
  assert.equal(stuck.Step, "node-unpublish");
  assert.match(stuck.LastError, /NodeUnpublishVolume failed: INTERNAL: injected fault/);
  assert.ok(stuck.Attempts >= 1);
  assert.ok(stuck.NextAttempt > Date.now() * 1e6 - 60e9, "the next attempt is a Unix ns time");

  // The CLI: a Releases section naming the alloc, the step and the error.
  const status = await cli.run(["volume", "status", "-verbose", "vol"]);
  assert.match(status, /^Releases$/m, status);
  const row = status.split("\n").find((l) => l.startsWith(alloc.ID));
  assert.ok(row, status);
  assert.match(row, /taken\s+node-unpublish\s+\d+\s+\S+Z \((in \d+s|now)\)\s+CSI NodeUnpublishVolume failed/);

  // The task event.
  const events = await eventually("a Volume Release Retry task event", async () => {
    const a = await cli.get<AllocView>(`/v1/allocation/${alloc.ID}`);
    const evs = Object.values(a?.TaskStates ?? {}).flatMap((t) => t.Events);
    const retry = evs.filter((e) => e.Type === "Volume Release Retry");
    return retry.length > 0 ? retry : undefined;
  });
  assert.match(
    events[0]!.DisplayMessage,
    /release of volume "data" \(vol\): node-unpublish failed \(CSI NodeUnpublishVolume failed: INTERNAL: injected fault.*\); retry 1 in \d/,
  );

  // The plugin recovers: the release finishes, the claim and its status are gone.
  setFaults({});
  await eventually("the claim to be released", async () => {
    const v = await cli.get<Volume>("/v1/volume/csi/vol?claims=true");
    return v && claimCount(v) === 0 ? v : undefined;
  });
  assert.doesNotMatch(await cli.run(["volume", "status", "vol"]), /^Releases$/m);
  assert.deepEqual(
    (await mountsUnder(dataDir)).filter((m) => m.includes(`/alloc/${alloc.ID}/`)),
    [],
    "nothing of the writer is mounted",
  );
});

steps.step("a purged plugin job's plugin stops being listed once its instance is gone", async () => {
  await cli.run(["job", "stop", "-purge", "writer"]);
  await cli.run(["volume", "delete", "vol"]);
  await cli.run(["job", "stop", "-purge", "plugin"]);
  // The GC's default period is 5 minutes: this only passes because an empty plugin goes at once.
  await eventually("the plugin to leave the list", async () => {
    const plugins = await cli.get<{ ID: string }[]>("/v1/plugins?type=csi");
    return plugins && !plugins.some((p) => p.ID === "hostpath") ? true : undefined;
  });
  const listed = await cli.run(["plugin", "status"]);
  assert.doesNotMatch(listed, /hostpath/);
});
