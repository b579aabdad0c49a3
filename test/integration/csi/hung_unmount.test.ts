/**
 * Bounded, escalating node unmount (issue 33 item 5) with a mount that really hangs: a FUSE file
 * system (test/helpers/fuse_server.ts) is what csi-hostpath's volume "vhung" resolves into, and it
 * stops answering. An in-process server, a real `berth agent -client` process with
 * `-csi-unmount-escalate-after=5s`, csi-hostpath as a raw_exec plugin task (its NodeUnpublish
 * stats the target, and hangs in the kernel). Alloc "app" holds vhung and a normal volume "vok";
 * alloc "other" holds "vother" on the same node. Stopping "app": its release completes within the
 * bound plus a margin, vok is released normally, vhung is detached lazily and shows as needing
 * attention (task event, `volume status`, the client's gauge), "other" keeps running and can be
 * stopped and started again, the node stays ready. Cleanup aborts the FUSE connection and leaves
 * nothing mounted. With BERTH_TEST_NO_ESCALATE=1 the escalation is off and the test fails.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { nullLogger } from "../../../src/internal/log.js";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { Server } from "../../../src/server/server.js";
import { hostpathJobOf, hostpathPluginGroup } from "../../builders/hostpath_plugin_job.js";
import {
  AgentProcess,
  eventually,
  freePort,
  getJson,
  killProcessesUnder,
  logTail,
  runCli,
} from "../../helpers/agent_process.js";
import { startFuseServer, type FuseServer } from "../../helpers/fuse_server.js";

const ESCALATE_S = 5;
/** The release must end within the bound plus this (the first attempts, backoff, server calls). */
const MARGIN_MS = 40_000;

interface AllocView {
  ID: string;
  ClientStatus: string;
  TaskStates?: Record<string, { Events?: { Type: string; DisplayMessage?: string; Message?: string }[] }>;
}

function appJob(name: string, volumes: Record<string, string>): string {
  const vols = Object.entries(volumes).map(
    ([alias, id]) =>
      `    volume ${JSON.stringify(alias)} {\n      type = "csi"\n      source = ${JSON.stringify(id)}\n` +
      '      access_mode = "single-node-writer"\n      attachment_mode = "file-system"\n    }',
  );
  return (
    `job ${JSON.stringify(name)} {\n  group "g" {\n${vols.join("\n")}\n` +
    '    task "t" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/sleep"\n' +
    '        args = ["3600"]\n      }\n    }\n  }\n}\n'
  );
}

test(
  "a hung node unmount is detached lazily within the bound; nothing else waits",
  { timeout: 240_000 },
  async (t) => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-hungumount-")));
    const storage = path.join(dir, "storage");
    const agentLog = path.join(dir, "a.log");
    const server = new Server({
      dataDir: path.join(dir, "server"),
      httpAddr: "127.0.0.1:0",
      log: nullLogger,
      // No ControllerGetVolume poll: its stat of the hung volume's directory is not under test.
      controllerCondition: { intervalMs: 3_600_000 },
    });
    let agent: AgentProcess | undefined;
    let fuse: FuseServer | undefined;
    let passed = false;
    try {
      await server.start();
      const base = server.httpAddress;
      const env = { BERTH_ADDR: base };
      const cli = async (args: string[]) => {
        const r = await runCli(args, env);
        assert.equal(r.code, 0, `berth ${args.join(" ")}: ${r.stderr}\n${r.stdout}`);
        return r.stdout;
      };
      const clientHttp = `127.0.0.1:${await freePort()}`;
      const escalate = process.env.BERTH_TEST_NO_ESCALATE === "1" ? "0" : `${ESCALATE_S}s`;
      agent = new AgentProcess(
        [
          "-client",
          "-data-dir",
          path.join(dir, "a"),
          `-servers=${new URL(base).host}`,
          "-node-name=a",
          `-http-addr=${clientHttp}`,
          `-csi-unmount-escalate-after=${escalate}`,
          "-csi-call-timeout=2s",
        ],
        agentLog,
      );
      await eventually("node a to be ready", async () => {
        const nodes = await getJson<{ Status: string }[]>(base, "/v1/nodes");
        return nodes.some((n) => n.Status === "ready") ? true : undefined;
      });
      const write = (name: string, text: string) => {
        fs.writeFileSync(path.join(dir, name), text);
        return path.join(dir, name);
      };
      const pluginArgs = [`--state-dir=${storage}`, "--node-id=${node.unique.name}"];
      await cli([
        "job",
        "run",
        write(
          "plugin.hcl",
          hostpathJobOf("plugin", [hostpathPluginGroup("plugin", { driver: "raw_exec", args: pluginArgs })]),
        ),
      ]);
      await eventually("plugin hostpath to be healthy", async () => {
        const p = await getJson<{ NodesHealthy: number }>(base, "/v1/plugin/csi/hostpath");
        return p.NodesHealthy >= 1 ? true : undefined;
      });
      for (const id of ["vhung", "vok", "vother"]) {
        const spec =
          `id = "${id}"\nname = "${id}"\ntype = "csi"\nplugin_id = "hostpath"\n` +
          'capability {\n  access_mode = "single-node-writer"\n  attachment_mode = "file-system"\n}\n';
        await cli(["volume", "create", write(`${id}.hcl`, spec)]);
      }
      // vhung's directory becomes a FUSE directory: its staging and target resolve into it.
      const ext = (await getJson<{ ExternalID: string }>(base, "/v1/volume/csi/vhung")).ExternalID;
      fuse = await startFuseServer(path.join(dir, "fuse"), [`volumes/${ext}`]);
      execFileSync("mount", [
        "--bind",
        path.join(dir, "fuse", "volumes", ext),
        path.join(storage, "volumes", ext),
      ]);

      const running = (job: string) =>
        eventually(`job ${job} to run`, async () => {
          const allocs = await getJson<AllocView[]>(base, `/v1/job/${job}/allocations`);
          return allocs.find((a) => a.ClientStatus === "running");
        });
      await cli(["job", "run", write("app.hcl", appJob("app", { hung: "vhung", ok: "vok" }))]);
      await cli(["job", "run", write("other.hcl", appJob("other", { other: "vother" }))]);
      const app = await running("app");
      const other = await running("other");

      fuse.hang();
      const stopped = Date.now();
      await cli(["job", "stop", "app"]);
      const claimsOf = async (id: string) =>
        Object.keys(
          (await getJson<{ WriteAllocs?: Record<string, unknown> }>(base, `/v1/volume/csi/${id}`))
            .WriteAllocs ?? {},
        );
      await eventually(
        "app's claims to be freed",
        async () =>
          (await claimsOf("vhung")).length === 0 && (await claimsOf("vok")).length === 0 ? true : undefined,
        ESCALATE_S * 1000 + MARGIN_MS,
      );
      const tookMs = Date.now() - stopped;
      t.diagnostic(`app's release took ${tookMs} ms (bound ${ESCALATE_S} s)`);
      assert.ok(tookMs < ESCALATE_S * 1000 + MARGIN_MS, `released in ${tookMs} ms`);

      const events = async () => {
        const a = await getJson<AllocView>(base, `/v1/allocation/${app.ID}`);
        return Object.values(a.TaskStates ?? {}).flatMap((t) => t.Events ?? []);
      };
      // Task events reach the server with the alloc's next update, maybe after the claims.
      const escalated = await eventually("the escalation's task event", async () => {
        const found = (await events()).filter((e) => e.Type === "Volume Unmount Escalated");
        return found.length > 0 ? found : undefined;
      });
      assert.equal(escalated.length, 1, "one escalation: vhung's, not vok's");
      assert.match(escalated[0]!.DisplayMessage ?? escalated[0]!.Message ?? "", /"hung" \(vhung\)/);

      const status = await cli(["volume", "status", "vhung"]);
      assert.match(status, /^Node Condition\s+= abnormal: needs attention: unmount of volume "hung"/m);
      const gauge = await eventually("the attention gauge at 1", async () => {
        const { Gauges } = await getJson<{ Gauges: { Name: string; Value: number }[] }>(
          `http://${clientHttp}`,
          "/v1/metrics",
        );
        const g = Gauges.find((x) => x.Name === "berth.client.csi.volumes_needing_attention");
        return g?.Value === 1 ? g : undefined;
      });
      assert.equal(gauge.Value, 1);

      // The rest of the node goes on while a stat still hangs in the kernel.
      const nodes = await getJson<{ Status: string }[]>(base, "/v1/nodes");
      assert.deepEqual(
        nodes.map((n) => n.Status),
        ["ready"],
      );
      assert.equal((await getJson<AllocView>(base, `/v1/allocation/${other.ID}`)).ClientStatus, "running");
      await cli(["job", "stop", "other"]);
      await eventually("vother's claim to be freed", async () =>
        (await claimsOf("vother")).length === 0 ? true : undefined,
      );
      await cli(["job", "run", path.join(dir, "other.hcl")]);
      await eventually("other to run again", async () => {
        const allocs = await getJson<AllocView[]>(base, "/v1/job/other/allocations");
        return allocs.some((a) => a.ClientStatus === "running" && a.ID !== other.ID) ? true : undefined;
      });
      assert.ok(!(await mountsUnder(storage)).some((m) => m.includes("per-alloc") && m.includes("vhung")));

      // The storage comes back (the connection is aborted: every hung call returns): the plugin,
      // told in the background, answers, and its own state converges.
      await fuse.cleanup();
      await eventually("the plugin to answer the deferred unmount", async () =>
        fs
          .readFileSync(agentLog, "utf8")
          .includes("the plugin answered the unmount of a lazily detached volume")
          ? true
          : undefined,
      );
      passed = true;
    } finally {
      await fuse?.cleanup();
      agent?.kill();
      killProcessesUnder(dir);
      if (!passed) process.stderr.write(`--- a.log (tail) ---\n${logTail(agentLog, 120)}\n`);
      await server.stop().catch(() => undefined);
      for (const m of (await mountsUnder(dir)).reverse()) {
        try {
          execFileSync("umount", ["-l", "--no-canonicalize", m], { stdio: "ignore" });
        } catch {
          /* already gone */
        }
      }
      const left = await mountsUnder(dir);
      fs.rmSync(dir, { recursive: true, force: true });
      if (passed) assert.deepEqual(left, [], "nothing is left mounted");
    }
  },
);
