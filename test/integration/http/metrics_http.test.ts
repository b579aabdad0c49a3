/**
 * GET /v1/metrics on an in-process server over real loopback HTTP: Nomad's JSON decoded strictly as
 * the Go client's api.MetricsSummary; `?format=prometheus` refused with Nomad's 415 "Prometheus is
 * not enabled" while prometheus_metrics is off, and parsed by the Prometheus client library's own
 * parser when on; request latency labelled by route template, never the raw path; an unknown format
 * is a 400 naming the parameter; no ACL needed, as Nomad's.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Server } from "../../../src/server/server.js";
import type { ServerOptions } from "../../../src/server/server_options.js";
import { nullLogger } from "../../../src/internal/log.js";
import { Telemetry, type TelemetrySettings } from "../../../src/internal/metrics/telemetry.js";
import { collectRuntimeMetrics } from "../../../src/internal/metrics/runtime.js";
import { decodeGo } from "../../nomadapi/go_decode.js";
import { family, parseExposition } from "../../helpers/prom_parse.js";

async function start(
  t: { after(fn: () => unknown): void },
  settings: Partial<TelemetrySettings>,
  extra: Partial<ServerOptions> = {},
): Promise<string> {
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 60_000,
    telemetry: new Telemetry({ hostname: "test-host", ...settings }),
    ...extra,
  });
  await server.start();
  t.after(() => server.stop());
  return server.httpAddress;
}

test("JSON is Nomad's MetricsSummary; Prometheus is refused with 415 while it is off", async (t) => {
  const addr = await start(t, { prometheusMetrics: false });
  const res = await fetch(`${addr}/v1/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /application\/json/);
  const body = (await res.json()) as { Gauges: { Name: string; Labels: Record<string, string> }[] };
  decodeGo(body, "MetricsSummary");
  const index = body.Gauges.find((g) => g.Name === "berth.server.state.index");
  assert.deepEqual(index?.Labels, { host: "test-host" });

  const prom = await fetch(`${addr}/v1/metrics?format=prometheus`);
  assert.equal(prom.status, 415);
  assert.equal(prom.headers.get("x-berth-error-code"), "ERR_UNSUPPORTED_MEDIA_TYPE");
  assert.equal((await prom.text()).trim(), "Prometheus is not enabled");

  const bogus = await fetch(`${addr}/v1/metrics?format=statsd`);
  assert.equal(bogus.status, 400);
  assert.match(await bogus.text(), /^format: unknown metrics format "statsd"/);
  assert.equal((await fetch(`${addr}/v1/metrics`, { method: "PUT" })).status, 405);
});

test("Prometheus: parsed by the library's parser; routes by template; no token needed with ACLs on", async (t) => {
  const addr = await start(
    t,
    { prometheusMetrics: true, collectionIntervalMs: 100 },
    { acl: { enabled: true } },
  );
  // Anonymous requests to routes that refuse them, with IDs that must not become labels.
  for (const id of ["job-secret-name-1", "job-secret-name-2"]) {
    assert.equal((await fetch(`${addr}/v1/job/${id}`)).status, 403);
  }
  const res = await fetch(`${addr}/v1/metrics?format=prometheus`, {
    headers: { "X-Nomad-Token": "not-a-real-token" },
  });
  assert.equal(res.status, 200, "no ACL needed, and an unknown token is not even resolved");
  assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  assert.ok(!text.includes("job-secret-name"), "raw paths never become labels");

  const families = parseExposition(text);
  const http = family(families, "berth_http_request_duration_seconds");
  assert.equal(http.type, "histogram");
  const count = http.samples.find(
    (s) => s.name.endsWith("_count") && s.labels.route === "/v1/job/:id" && s.labels.code === "403",
  );
  assert.equal(count?.value, 2);
  assert.equal(count?.labels.method, "GET");
  const claims = family(families, "berth_server_volume_claims");
  assert.equal(claims.type, "gauge");
  assert.deepEqual(
    claims.samples.map((s) => [s.labels.mode, s.labels.host, s.value]),
    [
      ["read", "test-host", 0],
      ["write", "test-host", 0],
    ],
  );
  assert.equal(family(families, "berth_agent_uptime").type, "gauge");
});

test("runtime metrics: the process's memory, GC, event loop, handles, fds and CPU, in both formats", async (t) => {
  const telemetry = new Telemetry({
    hostname: "test-host",
    prometheusMetrics: true,
    collectionIntervalMs: 0,
  });
  const stop = collectRuntimeMetrics(telemetry);
  t.after(stop);
  const server = new Server({ dataDir: null, httpAddr: "127.0.0.1:0", log: nullLogger, telemetry });
  await server.start();
  t.after(() => server.stop());
  // A few event-loop turns for the delay monitor to sample.
  await new Promise((r) => setTimeout(r, 50));

  const families = parseExposition(
    await (await fetch(`${server.httpAddress}/v1/metrics?format=prometheus`)).text(),
  );
  const value = (name: string) => {
    const f = family(families, name);
    assert.equal(f.type, "gauge", name);
    return f.samples[0]!.value;
  };
  assert.ok(value("berth_runtime_alloc_bytes") > 1 << 20, "a heap of more than 1 MiB in use");
  assert.ok(value("berth_runtime_sys_bytes") >= value("berth_runtime_alloc_bytes"));
  assert.ok(value("berth_runtime_open_fds") >= 3);
  assert.ok(value("berth_runtime_active_handles") >= 1);
  assert.ok(value("berth_runtime_cpu_user_seconds") > 0);
  assert.ok(value("berth_runtime_total_gc_runs") >= 0);
  assert.ok(value("berth_runtime_event_loop_delay_max_ms") >= 0);

  const json = (await (await fetch(`${server.httpAddress}/v1/metrics`)).json()) as {
    Gauges: { Name: string }[];
  };
  decodeGo(json, "MetricsSummary");
  for (const name of [
    "berth.runtime.alloc_bytes",
    "berth.runtime.total_gc_pause_ns",
    "berth.runtime.open_fds",
  ]) {
    assert.ok(
      json.Gauges.some((g) => g.Name === name),
      name,
    );
  }
});
