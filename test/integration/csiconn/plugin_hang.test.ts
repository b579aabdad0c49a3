/**
 * A hung node plugin that comes back (issue 8, item 9), through real processes: one agent (server
 * and client), berth's csi-hostpath as an exec monolith plugin, two volumes. The plugin process is
 * stopped with SIGSTOP (its socket still accepts, nothing answers) right before one job stops (its
 * volume must be released) and another starts (its volume must be claimed, staged and published),
 * and continued with SIGCONT 60 s later. Within a minute of SIGCONT both finish: the claimer's task
 * wrote into its volume (the bytes are in the plugin's storage), the stopped job's claim is freed on
 * the server, and once the claimer is done nothing is left staged or mounted.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { AgentProcess, crashAgent, eventually, findFiles, freePort } from "../../helpers/agent_process.js";
import { volumeSpec } from "../restart/fault_fixtures.js";
import {
  allocOf,
  claimCount,
  cleanUp,
  Cli,
  keepLogIfFailed,
  sleepers,
  writeSpecs,
  type VolumeView,
} from "../restart/restart_fixtures.js";

const SLEEP = 86_405;
const HANG_MS = 60_000;
/** The acceptance bound: both jobs finish within a minute of SIGCONT. */
const RECOVERY_MS = 60_000;
let dir: string;
let dataDir: string;
let logFile: string;
let agent: AgentProcess | null = null;
let cli: Cli;
let failed = false;
let stoppedPid: number | undefined;

before(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-plugin-hang-")));
  dataDir = path.join(dir, "data");
  logFile = path.join(dir, "agent.log");
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
});

after(async () => {
  // A stopped process ignores SIGKILL's siblings' cleanup order: continue it before killing.
  if (stoppedPid) continueProcess(stoppedPid);
  await crashAgent(agent!).catch(() => undefined);
  keepLogIfFailed(failed, logFile, `berth-plugin-hang-${process.pid}.log`);
  await cleanUp([dir], SLEEP);
});

function continueProcess(pid: number): void {
  try {
    process.kill(pid, "SIGCONT");
  } catch {
    /* gone */
  }
}

/** The csi-hostpath process the agent runs (chrooted into a task dir under this test's data dir). */
function pluginPid(): number | undefined {
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmd.includes("csi-hostpath") && fs.readlinkSync(`/proc/${pid}/root`).startsWith(dataDir))
        return pid;
    } catch {
      /* gone */
    }
  }
  return undefined;
}

function claimerJob(file: string): string {
  return `job "claimer" {
  type = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    volume "data" {
      type            = "csi"
      source          = "fresh"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo claimed > /data/${file}"]
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

const volume = (id: string) => cli.get<VolumeView>(`/v1/volume/csi/${id}?claims=true`);

/** Staging and publish mounts of volumes under the data dir (the plugin dir's own bind aside). */
async function volumeMounts(): Promise<string[]> {
  return (await mountsUnder(dataDir)).filter((m) => /[/](staging|per-alloc)[/]/.test(m));
}

test("a node plugin stopped for 60 s: the pending claim and release finish within a minute of SIGCONT", async (t) => {
  try {
    // The "app" job of the restart fixtures holds volume vol1 with a running task.
    const specs = writeSpecs(dir, SLEEP);
    await cli.run(["job", "run", specs.plugin]);
    await eventually(
      "plugin hostpath to be healthy",
      async () => {
        const p = await cli.get<{ NodesHealthy: number }>("/v1/plugin/csi/hostpath");
        return p && p.NodesHealthy >= 1 ? p : undefined;
      },
      60_000,
    );
    await cli.run(["volume", "create", specs.volume]);
    const fresh = path.join(dir, "fresh.hcl");
    fs.writeFileSync(fresh, volumeSpec("fresh"));
    await cli.run(["volume", "create", fresh]);
    await cli.run(["job", "run", specs.app]);
    await allocOf(cli, "app", "running");
    assert.equal((await volumeMounts()).length, 2, "the app's volume is staged and published");

    const pid = pluginPid();
    assert.ok(pid, "the plugin process is found");
    process.kill(pid, "SIGSTOP");
    stoppedPid = pid;
    // Both right away, before the plugin supervisor's next probe finds the plugin hung: the release
    // and the claim reach the plugin's socket and wait on it.
    await cli.run(["job", "stop", "app"]);
    const marker = `hang-${process.pid}.txt`;
    const claimer = path.join(dir, "claimer.hcl");
    fs.writeFileSync(claimer, claimerJob(marker));
    await cli.run(["job", "run", "-detach", claimer]);
    await new Promise((r) => setTimeout(r, HANG_MS));
    const appAlloc = (await cli.get<{ ClientStatus: string }[]>("/v1/job/app/allocations"))?.[0];
    assert.notEqual(appAlloc?.ClientStatus, "running", "the app's task was stopped while the plugin hung");
    continueProcess(pid);
    stoppedPid = undefined;
    const continued = Date.now();

    // Within a minute of SIGCONT: the claimer ran and wrote into its volume, vol1's claim is freed.
    await allocOf(cli, "claimer", "complete", RECOVERY_MS);
    t.diagnostic(`claimer complete ${Date.now() - continued} ms after SIGCONT`);
    const written = findFiles(dataDir, marker);
    assert.equal(written.length, 1, `the claimer's file exists once: ${JSON.stringify(written)}`);
    assert.match(written[0]!, /[/]hostpath[/]/, "the claimer wrote into the plugin's storage");
    assert.equal(fs.readFileSync(written[0]!, "utf8"), "claimed\n");
    await eventually(
      "vol1's claim to be freed",
      async () => {
        const v = await volume("vol1");
        return v && claimCount(v) === 0 ? v : undefined;
      },
      RECOVERY_MS,
    );
    t.diagnostic(`vol1's claim freed ${Date.now() - continued} ms after SIGCONT`);
    await eventually(
      "the claimer's claim to be freed",
      async () => {
        const v = await volume("fresh");
        return v && claimCount(v) === 0 ? v : undefined;
      },
      RECOVERY_MS,
    );
    assert.deepEqual(await volumeMounts(), [], "nothing is left staged or published");

    await cli.run(["volume", "delete", "vol1"]);
    await cli.run(["volume", "delete", "fresh"]);
    await cli.run(["job", "stop", "plugin"]);
    await allocOf(cli, "plugin", "complete");
    assert.equal(await agent!.stop(30_000), 0, "the agent exits 0");
    assert.deepEqual(await mountsUnder(dir), [], "nothing is mounted under the test dir");
    assert.deepEqual(sleepers(SLEEP), [], "no task is left running");
  } catch (err) {
    failed = true;
    throw err;
  }
});
