import assert from "node:assert/strict";
import { test } from "node:test";
import { normaliseFlags, parseAgentArgs } from "../../../src/agent/options.js";

test("-dev runs server and client with a throwaway data dir on the default address", () => {
  const o = parseAgentArgs(["-dev"]);
  assert.equal(o.dev, true);
  assert.equal(o.server, true);
  assert.equal(o.client, true);
  assert.equal(o.dataDir, null);
  assert.equal(o.httpAddr, "127.0.0.1:4646");
});

test("Nomad-style flags: -flag=value and -flag value", () => {
  const o = parseAgentArgs(["-dev", "-data-dir=/var/berth", "-http-addr", "127.0.0.1:9000"]);
  assert.equal(o.dataDir, "/var/berth");
  assert.equal(o.httpAddr, "127.0.0.1:9000");
  assert.deepEqual(normaliseFlags(["-a", "--b", "-", "x"]), ["--a", "--b", "-", "x"]);
});

test("-client needs -servers and -data-dir; servers get a scheme", () => {
  assert.throws(() => parseAgentArgs(["-client", "-data-dir", "/d"]), /-servers=ADDR/);
  assert.throws(() => parseAgentArgs(["-client", "-servers", "h:1"]), /-data-dir is required/);
  const o = parseAgentArgs(["-client", "-data-dir", "/d", "-servers=10.0.0.1:4646,http://b:4646"]);
  assert.deepEqual(o.servers, ["http://10.0.0.1:4646", "http://b:4646"]);
  assert.equal(o.server, false);
});

test("bad flags are refused with the flag named as typed", () => {
  assert.throws(() => parseAgentArgs([]), /one of -dev, -server or -client/);
  assert.throws(() => parseAgentArgs(["-dev", "-bogus"]), /'-bogus'/);
  assert.throws(() => parseAgentArgs(["-dev", "-http-addr", "nope"]), /-http-addr: "nope" is not HOST:PORT/);
  assert.throws(() => parseAgentArgs(["-dev", "-log-level", "loud"]), /unknown level "loud"/);
});

test("-csi-plugin-wait and -csi-claim-retry take durations; absent means the client's defaults", () => {
  const o = parseAgentArgs(["-dev", "-csi-plugin-wait=3s", "-csi-claim-retry", "10m"]);
  assert.equal(o.csiPluginWaitMs, 3000);
  assert.equal(o.csiClaimRetryMs, 600_000);
  const d = parseAgentArgs(["-dev"]);
  assert.equal(d.csiPluginWaitMs, null);
  assert.equal(d.csiClaimRetryMs, null);
  assert.throws(
    () => parseAgentArgs(["-dev", "-csi-plugin-wait=soon"]),
    /-csi-plugin-wait: "soon" is not a duration/,
  );
});

test("-csi-call-timeout takes a duration for node CSI calls; absent keeps the volume manager's default", () => {
  assert.equal(parseAgentArgs(["-dev", "-csi-call-timeout=1500ms"]).csiCallTimeoutMs, 1500);
  assert.equal(parseAgentArgs(["-dev"]).csiCallTimeoutMs, null);
  assert.throws(() => parseAgentArgs(["-dev", "-csi-call-timeout=0s"]), /must be longer than zero/);
});

test("-csi-controller-condition-interval takes a duration for the server; absent keeps the default", () => {
  const flag = "-csi-controller-condition-interval";
  const opts = (v?: string) =>
    parseAgentArgs(["-server", "-data-dir=/d", ...(v === undefined ? [] : [`${flag}=${v}`])]);
  assert.equal(opts("30s").csiControllerConditionIntervalMs, 30_000);
  assert.equal(opts().csiControllerConditionIntervalMs, null);
  assert.throws(() => opts("often"), /-csi-controller-condition-interval: "often" is not a duration/);
  assert.throws(() => opts("0s"), /must be longer than zero/);
});

test("-csi-attachment-reconcile-interval and -dry-run reach the server's options; absent keeps the defaults", () => {
  const opts = (...flags: string[]) => parseAgentArgs(["-server", "-data-dir=/d", ...flags]);
  const set = opts("-csi-attachment-reconcile-interval=90s", "-csi-attachment-reconcile-dry-run");
  assert.deepEqual([set.csiAttachmentReconcileIntervalMs, set.csiAttachmentReconcileDryRun], [90_000, true]);
  const unset = opts();
  assert.deepEqual(
    [unset.csiAttachmentReconcileIntervalMs, unset.csiAttachmentReconcileDryRun],
    [null, false],
  );
  assert.throws(() => opts("-csi-attachment-reconcile-interval=0s"), /must be longer than zero/);
});

test("-heartbeat-ttl takes a duration for the server; absent keeps the server's default", () => {
  assert.equal(parseAgentArgs(["-server", "-data-dir=/d", "-heartbeat-ttl=5s"]).heartbeatTtlMs, 5000);
  assert.equal(parseAgentArgs(["-server", "-data-dir=/d"]).heartbeatTtlMs, null);
  assert.throws(() => parseAgentArgs(["-server", "-data-dir=/d", "-heartbeat-ttl=soon"]), /-heartbeat-ttl/);
  assert.throws(
    () => parseAgentArgs(["-server", "-data-dir=/d", "-heartbeat-ttl=0s"]),
    /-heartbeat-ttl: must be longer than zero/,
  );
});

test("-csi-capacity-interval takes a duration for the server; absent keeps the default", () => {
  const opts = (v?: string) =>
    parseAgentArgs(["-server", "-data-dir=/d", ...(v === undefined ? [] : [`-csi-capacity-interval=${v}`])]);
  assert.equal(opts("30s").csiCapacityIntervalMs, 30_000);
  assert.equal(opts().csiCapacityIntervalMs, null);
  assert.throws(() => opts("often"), /-csi-capacity-interval: "often" is not a duration/);
});
