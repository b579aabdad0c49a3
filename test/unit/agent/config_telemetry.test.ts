/**
 * The agent config's `telemetry` block: Nomad's names and defaults, -dev turning Prometheus on as
 * Nomad's DevConfig does, a file's setting winning; unsupported settings and bad values refused
 * naming the key.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseAgentConfig } from "../../../src/agent/config_file.js";
import { telemetrySettings } from "../../../src/agent/config_telemetry.js";

test("reads Nomad's telemetry block; -dev turns Prometheus on unless the file says otherwise", async () => {
  const cfg = await parseAgentConfig(
    "a.hcl",
    'telemetry {\n  prometheus_metrics = true\n  disable_hostname = true\n  collection_interval = "5s"\n  in_memory_collection_interval = "2s"\n}\n',
  );
  assert.deepEqual(cfg.telemetry, {
    prometheusMetrics: true,
    disableHostname: true,
    collectionIntervalMs: 5000,
    inMemoryCollectionIntervalMs: 2000,
  });
  const none = telemetrySettings(undefined, false);
  assert.equal(none.prometheusMetrics, false, "Nomad's default: off");
  assert.equal(none.disableHostname, false);
  assert.equal(none.collectionIntervalMs, 1000);
  assert.equal(none.inMemoryCollectionIntervalMs, 10_000);
  assert.equal(telemetrySettings(undefined, true).prometheusMetrics, true, "-dev: on");
  assert.equal(telemetrySettings({ prometheusMetrics: false }, true).prometheusMetrics, false);
  assert.equal(none.publishAllocationMetrics, false, "Nomad's default: off");
  assert.equal(none.publishNodeMetrics, false);
  const publish = await parseAgentConfig(
    "p.hcl",
    "telemetry {\n  publish_allocation_metrics = true\n  publish_node_metrics = true\n}\n",
  );
  assert.deepEqual(publish.telemetry, { publishAllocationMetrics: true, publishNodeMetrics: true });
  const on = telemetrySettings(publish.telemetry, false);
  assert.equal(on.publishAllocationMetrics, true);
  assert.equal(on.publishNodeMetrics, true);
  const json = await parseAgentConfig("a.json", JSON.stringify({ telemetry: { prometheus_metrics: true } }));
  assert.deepEqual(json.telemetry, { prometheusMetrics: true });
});

test("unknown settings and bad values are refused naming the key", async () => {
  const cases: [string, RegExp][] = [
    ['telemetry {\n  collection_interval = "1ms"\n}\n', /collection_interval must be between 100ms and 1h/],
    [
      'telemetry {\n  in_memory_collection_interval = "soon"\n}\n',
      /in_memory_collection_interval must be a duration/,
    ],
    ['telemetry {\n  prometheus_metrics = "yes"\n}\n', /prometheus_metrics must be true or false/],
    ["telemetry {\n  bogus = 1\n}\n", /t\.hcl:2:3: unknown key "telemetry\.bogus"/],
  ];
  for (const [text, re] of cases) {
    await assert.rejects(parseAgentConfig("t.hcl", text), (e: Error) => re.test(e.message), text);
  }
});
