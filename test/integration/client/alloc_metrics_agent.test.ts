/**
 * Published allocation and node metrics on a real `berth agent -dev` with Nomad's
 * `telemetry { publish_allocation_metrics = true, publish_node_metrics = true,
 * collection_interval = "1s" }`: a raw_exec task's series appear on /v1/metrics (Prometheus text,
 * read by Debian's prometheus_client parser, and the JSON summary) with Nomad's names and labels,
 * its reservation in bytes and MHz, CPU gauges once a rate exists; the host's memory and CPU
 * gauges too. After `job stop` the task's series disappear. Ends asserting nothing is left running.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import {
  AgentProcess,
  eventually,
  freePort,
  getJson,
  killProcessGroupsUnder,
  logTail,
  runCli,
} from "../../helpers/agent_process.js";
import { parseExposition, type PromSample } from "../../helpers/prom_parse.js";

let dir: string;
let agent: AgentProcess;
let addr: string;
let logFile: string;
let failed = true;

const TELEMETRY = `telemetry {
  publish_allocation_metrics = true
  publish_node_metrics       = true
  collection_interval        = "1s"
}
`;

const JOB = `job "metered" {
  group "g" {
    task "sleeper" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
      resources {
        cpu    = 150
        memory = 64
      }
    }
  }
}
`;

before(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-allocmetrics-")));
  const port = await freePort();
  addr = `http://127.0.0.1:${port}`;
  logFile = path.join(dir, "agent.log");
  const config = path.join(dir, "telemetry.hcl");
  fs.writeFileSync(config, TELEMETRY);
  agent = new AgentProcess(
    ["-dev", "-data-dir", path.join(dir, "data"), "-http-addr", `127.0.0.1:${port}`, "-config", config],
    logFile,
  );
  await eventually("the dev node to be ready", async () => {
    const nodes = await getJson<{ Status: string }[]>(addr, "/v1/nodes");
    return nodes.some((n) => n.Status === "ready") ? true : undefined;
  });
});

after(async () => {
  try {
    await runCli(["job", "stop", "-purge", "metered"], { BERTH_ADDR: addr });
  } finally {
    const code = await agent?.stop(60_000);
    const left = killProcessGroupsUnder(dir);
    if (failed || code !== 0) process.stderr.write(`agent log:\n${logTail(logFile, 80)}\n`);
    fs.rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0, "the agent stopped cleanly");
    assert.deepEqual(left, [], "no task process was left running");
  }
});

/** Every sample of the Prometheus exposition, by family name. */
async function scrape(): Promise<Map<string, PromSample[]>> {
  const res = await fetch(`${addr}/v1/metrics?format=prometheus`);
  assert.equal(res.status, 200);
  return new Map(parseExposition(await res.text()).map((f) => [f.name, f.samples]));
}

function ofAlloc(m: Map<string, PromSample[]>, name: string, allocId: string): PromSample | undefined {
  return m.get(name)?.find((s) => s.labels.alloc_id === allocId);
}

test("a running task's usage is published on the node's /v1/metrics and gone after it stops", async () => {
  const file = path.join(dir, "metered.hcl");
  fs.writeFileSync(file, JOB);
  const r = await runCli(["job", "run", "-detach", file], { BERTH_ADDR: addr });
  assert.equal(r.code, 0, r.stderr);
  const allocId = await eventually("the task to run", async () => {
    const allocs = await getJson<{ ID: string; ClientStatus: string }[]>(addr, "/v1/job/metered/allocations");
    return allocs.find((a) => a.ClientStatus === "running")?.ID;
  });

  // CPU gauges need two samples: both are there within a few collection intervals.
  const m = await eventually(
    "the task's memory and CPU series",
    async () => {
      const got = await scrape();
      return ofAlloc(got, "berth_client_allocs_cpu_total_percent", allocId) ? got : undefined;
    },
    30_000,
  );
  const rss = ofAlloc(m, "berth_client_allocs_memory_rss", allocId);
  assert.ok(rss, "an RSS series");
  assert.deepEqual(
    { ...rss.labels, host: undefined },
    {
      job: "metered",
      task_group: "g",
      alloc_id: allocId,
      task: "sleeper",
      namespace: "default",
      host: undefined,
    },
  );
  assert.ok(rss.value > 0, `the sleeper's RSS is measured (${rss.value})`);
  assert.equal(ofAlloc(m, "berth_client_allocs_memory_allocated", allocId)?.value, 64 * 1024 * 1024);
  assert.equal(ofAlloc(m, "berth_client_allocs_cpu_allocated", allocId)?.value, 150);
  assert.ok((ofAlloc(m, "berth_client_allocs_cpu_total_ticks", allocId)?.value ?? -1) >= 0);
  // publish_node_metrics: the host's memory and each CPU.
  const total = m.get("berth_client_host_memory_total")?.[0];
  assert.ok(total && total.value > 0, "the host's memory");
  assert.ok(total.labels.node_id, "labelled with the node");
  assert.ok((m.get("berth_client_host_cpu_total_percent") ?? []).some((s) => s.labels.cpu === "cpu0"));

  const json = await getJson<{ Gauges: { Name: string; Labels: Record<string, string> }[] }>(
    addr,
    "/v1/metrics",
  );
  assert.ok(
    json.Gauges.some((g) => g.Name === "berth.client.allocs.memory.rss" && g.Labels.alloc_id === allocId),
    "the JSON summary has it too",
  );

  const stop = await runCli(["job", "stop", "-detach", "metered"], { BERTH_ADDR: addr });
  assert.equal(stop.code, 0, stop.stderr);
  await eventually(
    "the stopped task's series to disappear",
    async () => {
      const got = await scrape();
      const left = [...got.values()].flat().filter((s) => s.labels.alloc_id === allocId);
      return left.length === 0 ? true : undefined;
    },
    30_000,
  );
  failed = false;
});
