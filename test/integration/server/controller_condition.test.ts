/**
 * The controller's volume condition end to end (issue 15): an in-process server on loopback (real
 * SQLite state file, its leader loops with the condition poll set short), a real `berth agent
 * -client` process, and berth's csi-hostpath as a monolith plugin task under raw_exec (it
 * advertises GET_VOLUME and VOLUME_CONDITION). A created volume gets a healthy
 * `ControllerCondition` once, and further polls write nothing; removing the volume's directory
 * behind the plugin's back turns it abnormal, with a CSIVolumeAbnormal event, the metrics'
 * abnormal gauge at 1 and a line in `berth volume status`. Nothing is left running or mounted.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { readCallLog } from "../../../src/csi/hostpath/call_log.js";
import { nullLogger } from "../../../src/internal/log.js";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { Server } from "../../../src/server/server.js";
import { hostpathJobOf, hostpathPluginGroup } from "../../builders/hostpath_plugin_job.js";
import {
  AgentProcess,
  eventually,
  getJson,
  killProcessesUnder,
  logTail,
  runCli,
} from "../../helpers/agent_process.js";
import { openStream } from "./event_client.js";

/** Whether a process whose command line mentions `dir` runs (without touching it). */
function running(dir: string): boolean {
  return fs.readdirSync("/proc").some((entry) => {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) return false;
    try {
      return fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(dir);
    } catch {
      return false;
    }
  });
}

interface Gauge {
  Name: string;
  Value: number;
  Labels: Record<string, string>;
}

interface VolumeView {
  ExternalID: string;
  ModifyIndex: number;
  ControllerCondition: { Abnormal: boolean; Message: string; UpdateTime: number } | null;
}

test(
  "removing a volume's directory turns its controller condition abnormal, with an event",
  {
    timeout: 180_000,
  },
  async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-ctrlcond-")));
    const storage = path.join(dir, "storage");
    const callLog = path.join(dir, "calls.jsonl");
    const agentLog = path.join(dir, "a.log");
    const server = new Server({
      dataDir: path.join(dir, "server"),
      httpAddr: "127.0.0.1:0",
      log: nullLogger,
      controllerCondition: { intervalMs: 200 },
    });
    let agent: AgentProcess | undefined;
    let passed = false;
    let serverStopped = false;
    try {
      await server.start();
      const base = server.httpAddress;
      const env = { BERTH_ADDR: base };
      const cli = async (args: string[]) => {
        const r = await runCli(args, env);
        assert.equal(r.code, 0, `berth ${args.join(" ")}: ${r.stderr}\n${r.stdout}`);
        return r.stdout;
      };
      agent = new AgentProcess(
        ["-client", "-data-dir", path.join(dir, "a"), `-servers=${new URL(base).host}`, "-node-name=a"],
        agentLog,
      );
      await eventually("node a to be ready", async () => {
        const nodes = await getJson<{ Status: string }[]>(base, "/v1/nodes");
        return nodes.some((n) => n.Status === "ready") ? true : undefined;
      });
      const pluginJob = path.join(dir, "plugin.hcl");
      fs.writeFileSync(
        pluginJob,
        hostpathJobOf("plugin", [
          hostpathPluginGroup("plugin", {
            driver: "raw_exec",
            type: "monolith",
            args: [`--state-dir=${storage}`, `--call-log=${callLog}`, "--node-id=${node.unique.name}"],
          }),
        ]),
      );
      await cli(["job", "run", pluginJob]);
      await eventually("plugin hostpath to be healthy", async () => {
        const p = await getJson<{ ControllersHealthy: number; NodesHealthy: number }>(
          base,
          "/v1/plugin/csi/hostpath",
        );
        return p.ControllersHealthy >= 1 && p.NodesHealthy >= 1 ? true : undefined;
      });
      const volFile = path.join(dir, "vol1.hcl");
      fs.writeFileSync(
        volFile,
        'id = "vol1"\nname = "vol1"\ntype = "csi"\nplugin_id = "hostpath"\n' +
          'capability {\n  access_mode = "single-node-writer"\n  attachment_mode = "file-system"\n}\n',
      );
      await cli(["volume", "create", volFile]);
      const volume = () => getJson<VolumeView>(base, "/v1/volume/csi/vol1?usage=true");

      const healthy = await eventually("a healthy controller condition", async () => {
        const v = await volume();
        return v.ControllerCondition ? v : undefined;
      });
      assert.deepEqual(
        [healthy.ControllerCondition!.Abnormal, healthy.ControllerCondition!.Message],
        [false, "volume directory is present"],
      );
      // Two more polls of the same condition write nothing.
      const polls = () =>
        readCallLog(callLog, { reads: true }).filter((c) => c.method === "ControllerGetVolume");
      const seen = polls().length;
      await eventually("two more polls", async () => (polls().length >= seen + 2 ? true : undefined));
      assert.equal(
        (await volume()).ModifyIndex,
        healthy.ModifyIndex,
        "an unchanged condition is not written",
      );
      assert.ok(
        polls().every((c) => c.volume_id === healthy.ExternalID && c.code === "OK"),
        "ControllerGetVolume of the volume's external ID",
      );

      const index = Number((await fetch(`${base}/v1/volume/csi/vol1`)).headers.get("x-nomad-index"));
      const stream = await openStream(base, `?topic=CSIVolume:vol1&index=${index}`);
      try {
        fs.rmSync(path.join(storage, "volumes", healthy.ExternalID), { recursive: true, force: true });
        const frame = await stream.waitFor((f) =>
          (f.Events ?? []).some((e) => e.Type === "CSIVolumeAbnormal"),
        );
        const event = frame.Events!.find((e) => e.Type === "CSIVolumeAbnormal")!;
        assert.equal(event.Key, "vol1");
        assert.equal("ControllerCondition" in event.Payload.Volume, false, "the payload keeps Nomad's shape");
      } finally {
        stream.close();
      }
      const abnormal = (await volume()).ControllerCondition!;
      assert.equal(abnormal.Abnormal, true);
      assert.match(abnormal.Message, /^volume directory .*\/volumes\/.* is missing$/);
      assert.ok(abnormal.UpdateTime > healthy.ControllerCondition!.UpdateTime);

      const status = await cli(["volume", "status", "vol1"]);
      assert.match(status, /^Controller Condition\s+= abnormal: volume directory .* is missing$/m);
      // The gauge follows the volumewatcher's read of the write, and a scrape's collection.
      await eventually("the abnormal gauge at 1", async () => {
        const { Gauges } = await getJson<{ Gauges: Gauge[] }>(base, "/v1/metrics");
        const g = Gauges.find(
          (x) => x.Name === "berth.server.volume.usage.abnormal" && x.Labels.volume_id === "vol1",
        );
        return g?.Value === 1 ? true : undefined;
      });

      await cli(["volume", "delete", "vol1"]);
      await cli(["job", "stop", "-purge", "plugin"]);
      // A client agent that stops leaves its tasks running (a restart adopts them): the plugin's
      // task must end with its job first.
      await eventually("the plugin task to exit", async () => (running(storage) ? undefined : true));
      assert.equal(await agent.stop(60_000), 0, "the agent stops cleanly");
      serverStopped = true;
      await server.stop();
      assert.deepEqual(killProcessesUnder(dir), [], "no process outlived the test");
      assert.deepEqual(await mountsUnder(dir), [], "nothing is mounted under the test's dir");
      passed = true;
    } finally {
      agent?.kill();
      const leftovers = killProcessesUnder(dir);
      if (!passed || leftovers.length > 0)
        process.stderr.write(`--- a.log (tail) ---\n${logTail(agentLog)}\n`);
      if (!serverStopped) await server.stop().catch(() => undefined);
      for (const m of (await mountsUnder(dir)).reverse()) {
        try {
          execFileSync("umount", ["-l", m]);
        } catch {
          /* already gone */
        }
      }
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);
