/**
 * The acceptance for metrics, against a real `berth agent -dev` running the README's quick
 * start through the CLI (the hostpath plugin job, `volume create`, the writer job, its release,
 * `volume delete`): `/v1/metrics?format=prometheus` shows non-zero CSI call counts per RPC and a
 * latency histogram per plugin and RPC, the plugin's healthy/expected gauges and no pending
 * release once the writer is gone — all read through the Prometheus client library's own parser
 * (Debian's python3-prometheus-client); the JSON answer decodes strictly as Nomad's Go
 * api.MetricsSummary and carries samples; the volume's secret appears nowhere in either. Nothing is
 * left mounted or running afterwards.
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
  freePort,
  getJson,
  killProcessGroupsUnder,
  killProcessesUnder,
  logTail,
  REPO_ROOT,
  runCli,
} from "../helpers/agent_process.js";
import { family, parseExposition, type PromFamily } from "../helpers/prom_parse.js";
import { decodeGo } from "../nomadapi/go_decode.js";

const SECRET = "metrics-e2e-s3cr3t-value";
let dir: string;
let dataDir: string;
let logFile: string;
let agent: AgentProcess;
let env: Record<string, string>;
let passed = false;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-metrics-e2e-"));
  dataDir = path.join(dir, "data");
  logFile = path.join(dir, "agent.log");
  const telemetry = path.join(dir, "telemetry.hcl");
  fs.writeFileSync(
    telemetry,
    'telemetry {\n  in_memory_collection_interval = "1s"\n  collection_interval = "100ms"\n}\n',
  );
  const port = await freePort();
  env = { BERTH_ADDR: `http://127.0.0.1:${port}` };
  agent = new AgentProcess(
    [
      "-dev",
      "-config",
      path.join(REPO_ROOT, "examples/hostpath/agent.hcl"),
      "-config",
      telemetry,
      "-data-dir",
      dataDir,
      "-http-addr",
      `127.0.0.1:${port}`,
    ],
    logFile,
  );
  await eventually(
    "the dev node to be ready",
    async () =>
      (await getJson<{ Status: string }[]>(env.BERTH_ADDR!, "/v1/nodes")).some((n) => n.Status === "ready")
        ? true
        : undefined,
    30_000,
  );
});

after(async () => {
  agent?.kill();
  const leftovers = [...killProcessGroupsUnder(dataDir), ...pluginProcesses()];
  for (const pid of pluginProcesses()) process.kill(pid, "SIGKILL");
  if (leftovers.length > 0 || !passed) process.stderr.write(`agent log:\n${logTail(logFile, 80)}\n`);
  for (const m of await mountsUnder(dataDir)) {
    try {
      execFileSync("umount", ["-l", m]);
    } catch {
      /* already gone */
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Pids of csi-hostpath processes chrooted into this agent's data dir. */
function pluginProcesses(): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmd.includes("csi-hostpath") && fs.readlinkSync(`/proc/${pid}/root`).startsWith(dataDir))
        out.push(pid);
    } catch {
      /* gone, or not ours */
    }
  }
  return out;
}

async function cli(args: string[]): Promise<void> {
  const r = await runCli(args, env, 120_000, { monitor: true });
  assert.equal(r.code, 0, `berth ${args.join(" ")} failed: ${r.stderr}\n${r.stdout}`);
}

async function allocStatuses(job: string): Promise<string[]> {
  return (await getJson<{ ClientStatus: string }[]>(env.BERTH_ADDR!, `/v1/job/${job}/allocations`)).map(
    (a) => a.ClientStatus,
  );
}

function value(f: PromFamily, sample: string, labels: Record<string, string>): number | undefined {
  return f.samples.find(
    (s) => s.name === sample && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  )?.value;
}

test(
  "quick start, then CSI call counts and latency histograms through the Prometheus parser",
  { timeout: 240_000 },
  async () => {
    await cli(["job", "run", "examples/hostpath/plugin.hcl"]);
    await eventually(
      "plugin hostpath to be healthy",
      async () => {
        const p = await getJson<{ NodesHealthy: number }>(env.BERTH_ADDR!, "/v1/plugin/csi/hostpath").catch(
          () => undefined,
        );
        return p && p.NodesHealthy >= 1 ? p : undefined;
      },
      90_000,
    );
    const volume = path.join(dir, "volume.hcl");
    fs.writeFileSync(
      volume,
      fs.readFileSync(path.join(REPO_ROOT, "examples/hostpath/volume.hcl"), "utf8") +
        `\nsecrets {\n  token = "${SECRET}"\n}\n`,
    );
    await cli(["volume", "create", volume]);
    await cli(["job", "run", "examples/hostpath/job.hcl"]);
    await eventually(
      "the writer to complete",
      async () => {
        const s = await allocStatuses("writer");
        if (s.includes("failed")) throw new Error("writer failed");
        return s.length === 1 && s[0] === "complete" ? true : undefined;
      },
      120_000,
    );
    await cli(["job", "stop", "-purge", "writer"]);
    await eventually(
      "the volume's claims to be released",
      async () => {
        const v = await getJson<Record<string, Record<string, unknown> | null>>(
          env.BERTH_ADDR!,
          "/v1/volume/csi/demo?claims=true",
        );
        return ["ReadAllocs", "WriteAllocs", "PastClaims"].every((k) => Object.keys(v[k] ?? {}).length === 0)
          ? true
          : undefined;
      },
      60_000,
    );

    const res = await fetch(`${env.BERTH_ADDR}/v1/metrics?format=prometheus`);
    assert.equal(res.status, 200, "-dev turns Prometheus on, as Nomad's dev mode");
    const text = await res.text();
    assert.ok(!text.includes(SECRET), "the volume's secret is in no label");
    const families = parseExposition(text);

    const calls = family(families, "berth_client_csi_rpc_calls");
    assert.equal(calls.type, "counter");
    for (const rpc of [
      "CreateVolume",
      "NodeStageVolume",
      "NodePublishVolume",
      "NodeUnpublishVolume",
      "NodeUnstageVolume",
    ]) {
      const n = value(calls, "berth_client_csi_rpc_calls_total", { plugin_id: "hostpath", rpc, code: "OK" });
      assert.ok(n !== undefined && n >= 1, `${rpc} counted: ${n}`);
    }
    const latency = family(families, "berth_client_csi_rpc_duration_seconds");
    assert.equal(latency.type, "histogram");
    const labels = { plugin_id: "hostpath", rpc: "NodePublishVolume" };
    const count = value(latency, "berth_client_csi_rpc_duration_seconds_count", labels);
    assert.ok(count !== undefined && count >= 1);
    assert.equal(
      value(latency, "berth_client_csi_rpc_duration_seconds_bucket", { ...labels, le: "+Inf" }),
      count,
    );
    assert.ok(
      latency.samples.filter((s) => s.name.endsWith("_bucket") && s.labels.rpc === "NodePublishVolume")
        .length > 5,
    );

    const healthy = family(families, "berth_server_plugin_nodes_healthy");
    assert.equal(value(healthy, "berth_server_plugin_nodes_healthy", { plugin_id: "hostpath" }), 1);
    const pending = family(families, "berth_server_volume_releases_pending");
    assert.deepEqual(pending.samples, [], "no release pending once the writer is gone");
    assert.ok((value(family(families, "berth_server_state_index"), "berth_server_state_index", {}) ?? 0) > 0);
    // The agent measures its own process (internal/metrics/runtime.ts).
    assert.ok(
      (value(family(families, "berth_runtime_alloc_bytes"), "berth_runtime_alloc_bytes", {}) ?? 0) > 0,
    );
    const evals = family(families, "berth_server_scheduler_eval_seconds");
    assert.ok(
      (value(evals, "berth_server_scheduler_eval_seconds_count", {
        trigger: "job-register",
        outcome: "placed",
      }) ?? 0) >= 1,
    );

    // JSON: Nomad's shape, gauges now, and samples of the last finished 1 s interval (this very
    // test's requests land in it).
    const json = await eventually(
      "a JSON answer with samples",
      async () => {
        const body = (await (await fetch(`${env.BERTH_ADDR}/v1/metrics`)).json()) as { Samples: unknown[] };
        return body.Samples.length > 0 ? body : undefined;
      },
      10_000,
    );
    decodeGo(json, "MetricsSummary");
    assert.ok(!JSON.stringify(json).includes(SECRET));

    await cli(["volume", "delete", "demo"]);
    const code = await agent.stop(90_000);
    assert.equal(code, 0);
    assert.deepEqual(await mountsUnder(dataDir), [], "nothing is mounted under the data dir");
    assert.deepEqual(killProcessesUnder(dataDir), [], "no task process outlived the agent");
    assert.deepEqual(pluginProcesses(), [], "no plugin process outlived the agent");
    passed = true;
  },
);
