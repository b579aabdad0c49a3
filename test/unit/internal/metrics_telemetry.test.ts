/**
 * The agent's metrics core (internal/metrics): the JSON answer is go-metrics' MetricsSummary as
 * Nomad's Go client decodes it (strictly), counters and timers aggregated per wall-clock interval
 * and shown once the interval is finished, Prometheus names with units, the `host` label on gauges
 * unless disable_hostname, gauges replaced whole, and collectors run at most once per
 * collection_interval.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Telemetry } from "../../../src/internal/metrics/telemetry.js";
import { goTimeString } from "../../../src/internal/metrics/summary.js";
import { decodeGo } from "../../nomadapi/go_decode.js";

function clock(start: number) {
  const c = { t: start, now: () => c.t };
  return c;
}

test("JSON: counters and samples of the last finished interval, go-metrics' aggregates, strict Go shape", async () => {
  const c = clock(Date.UTC(2026, 10, 24, 19, 6, 30, 200));
  const t = new Telemetry({ inMemoryCollectionIntervalMs: 10_000, hostname: "h1" }, undefined, c.now);
  const calls = t.counter(["client", "csi", "rpc", "calls"], "calls", ["rpc", "code"]);
  const dur = t.timer(["client", "csi", "rpc", "duration"], "time", ["rpc"]);
  calls.inc({ rpc: "NodePublishVolume", code: "OK" });
  calls.inc({ rpc: "NodePublishVolume", code: "OK" });
  for (const ms of [2, 4, 6]) dur.observe({ rpc: "NodePublishVolume" }, ms);

  // Only one interval yet: it is shown (go-metrics shows the current one while it is alone).
  let s = await t.summary();
  decodeGo(s, "MetricsSummary");
  assert.equal(s.Timestamp, "2026-11-24 19:06:30 +0000 UTC");
  assert.deepEqual(s.Points, []);
  assert.deepEqual(s.Counters, [
    {
      Name: "berth.client.csi.rpc.calls",
      Count: 2,
      Rate: 0.2,
      Sum: 2,
      Min: 1,
      Max: 1,
      Mean: 1,
      Stddev: 0,
      Labels: { rpc: "NodePublishVolume", code: "OK" },
    },
  ]);
  const sample = s.Samples[0]!;
  assert.equal(sample.Name, "berth.client.csi.rpc.duration");
  assert.deepEqual([sample.Count, sample.Sum, sample.Min, sample.Max, sample.Mean], [3, 12, 2, 6, 4]);
  assert.equal(sample.Stddev, 2);

  // The next interval starts: the finished one is shown, new observations wait for their turn.
  c.t += 10_000;
  calls.inc({ rpc: "NodeUnpublishVolume", code: "NOT_FOUND" });
  s = await t.summary();
  assert.equal(s.Timestamp, "2026-11-24 19:06:30 +0000 UTC");
  assert.deepEqual(
    s.Counters.map((x) => x.Labels.rpc),
    ["NodePublishVolume"],
  );
  c.t += 10_000;
  s = await t.summary();
  assert.equal(s.Timestamp, "2026-11-24 19:06:40 +0000 UTC");
  assert.deepEqual(
    s.Counters.map((x) => [x.Labels.rpc, x.Labels.code, x.Count]),
    [["NodeUnpublishVolume", "NOT_FOUND", 1]],
  );
  assert.deepEqual(s.Samples, []);
  // Gauges are the present values, with the host label.
  const uptime = s.Gauges.find((g) => g.Name === "berth.agent.uptime");
  assert.deepEqual(uptime?.Labels, { host: "h1" });
  decodeGo(s, "MetricsSummary");
});

test("Prometheus: counters _total, timers as histograms in seconds, gauges with host unless disabled", async () => {
  const t = new Telemetry({ hostname: "h1" });
  t.counter(["client", "csi", "rpc", "calls"], "calls", ["rpc"]).inc({ rpc: "Probe" }, 3);
  t.timer(["http", "request", "duration"], "time", ["route"]).observe({ route: "/v1/job/:id" }, 1500);
  t.gauge(["server", "state", "index"], "index", []).set({}, 42);
  const text = await t.prometheus();
  assert.match(text, /^# TYPE berth_client_csi_rpc_calls_total counter$/m);
  assert.match(text, /^berth_client_csi_rpc_calls_total\{rpc="Probe"\} 3$/m);
  assert.match(text, /^# TYPE berth_http_request_duration_seconds histogram$/m);
  assert.match(text, /^berth_http_request_duration_seconds_bucket\{le="1",route="\/v1\/job\/:id"\} 0$/m);
  assert.match(text, /^berth_http_request_duration_seconds_bucket\{le="2.5",route="\/v1\/job\/:id"\} 1$/m);
  assert.match(text, /^berth_http_request_duration_seconds_sum\{route="\/v1\/job\/:id"\} 1.5$/m);
  assert.match(text, /^berth_server_state_index\{host="h1"\} 42$/m);

  const noHost = new Telemetry({ disableHostname: true });
  noHost.gauge(["server", "state", "index"], "index", []).set({}, 7);
  assert.match(await noHost.prometheus(), /^berth_server_state_index 7$/m);
  assert.equal(
    (await noHost.summary()).Gauges.find((g) => g.Name === "berth.server.state.index")?.Labels.host,
    undefined,
  );
});

test("a gauge replaced whole loses the series not given; collectors run once per collection interval", async () => {
  const t = new Telemetry({ disableHostname: true, collectionIntervalMs: 60_000 });
  const g = t.gauge(["server", "plugin", "nodes_healthy"], "healthy", ["plugin_id"]);
  let runs = 0;
  let plugins: [string, number][] = [
    ["a", 1],
    ["b", 2],
  ];
  const stop = t.collect(() => {
    runs++;
    g.replace(plugins.map(([id, n]) => [{ plugin_id: id }, n]));
  });
  assert.match(await t.prometheus(), /plugin_id="b"\} 2/);
  plugins = [["a", 3]];
  await t.prometheus();
  await t.summary();
  assert.equal(runs, 1, "scrapes within collection_interval share one collection");
  stop();
  // A new collector (a server started again) is collected at once.
  t.collect(() => g.replace(plugins.map(([id, n]) => [{ plugin_id: id }, n])));
  const text = await t.prometheus();
  assert.match(text, /plugin_id="a"\} 3/);
  assert.doesNotMatch(text, /plugin_id="b"/, "a plugin gone is gone from the gauge");
  // Defining a metric again (a server restarted on the same agent) returns the same one.
  const again = t.gauge(["server", "plugin", "nodes_healthy"], "healthy", ["plugin_id"]);
  assert.equal(again, g);
});

test("Go's time.String() of the interval start, rounded to the second", () => {
  assert.equal(goTimeString(Date.UTC(2026, 0, 2, 3, 4, 5, 600)), "2026-01-02 03:04:06 +0000 UTC");
});
