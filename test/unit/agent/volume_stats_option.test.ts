/**
 * The volume stats interval: `client { csi_volume_stats_interval }` in the agent config and the
 * `-csi-volume-stats-interval` flag (which wins); bad values are refused naming the setting.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseAgentConfig } from "../../../src/agent/config_file.js";
import { parseAgentArgs, parseAgentFlags, resolveAgentOptions } from "../../../src/agent/options.js";

test("csi_volume_stats_interval: config key, flag, flag over file, default unset", async () => {
  const file = await parseAgentConfig("a.hcl", 'client {\n  csi_volume_stats_interval = "30s"\n}\n');
  assert.equal(file.csiVolumeStatsIntervalMs, 30_000);
  assert.equal(resolveAgentOptions(parseAgentFlags(["-dev"]), file).csiVolumeStatsIntervalMs, 30_000);
  const flagged = resolveAgentOptions(parseAgentFlags(["-dev", "-csi-volume-stats-interval=2m"]), file);
  assert.equal(flagged.csiVolumeStatsIntervalMs, 120_000);
  assert.equal(parseAgentArgs(["-dev"]).csiVolumeStatsIntervalMs, null, "default: the client's 60 s");
});

test("csi_volume_stats_interval: bad values are refused naming the setting", async () => {
  await assert.rejects(
    parseAgentConfig("a.hcl", 'client {\n  csi_volume_stats_interval = "soon"\n}\n'),
    /csi_volume_stats_interval must be a duration/,
  );
  await assert.rejects(
    parseAgentConfig("a.hcl", 'client {\n  csi_volume_stats_interval = "0s"\n}\n'),
    /csi_volume_stats_interval must be at least 1ms/,
  );
  assert.throws(
    () => parseAgentArgs(["-dev", "-csi-volume-stats-interval=often"]),
    /-csi-volume-stats-interval/,
  );
  assert.throws(() => parseAgentArgs(["-dev", "-csi-volume-stats-interval=0s"]), /longer than zero/);
});

test("csi_unmount_escalate_after: config key (0s: never), flag over file, -flag=0, default unset", async () => {
  const file = await parseAgentConfig("a.hcl", 'client {\n  csi_unmount_escalate_after = "2m"\n}\n');
  assert.equal(file.csiUnmountEscalateAfterMs, 120_000);
  assert.equal(resolveAgentOptions(parseAgentFlags(["-dev"]), file).csiUnmountEscalateAfterMs, 120_000);
  const flagged = resolveAgentOptions(parseAgentFlags(["-dev", "-csi-unmount-escalate-after=5s"]), file);
  assert.equal(flagged.csiUnmountEscalateAfterMs, 5_000);
  const off = resolveAgentOptions(parseAgentFlags(["-dev", "-csi-unmount-escalate-after=0"]), file);
  assert.equal(off.csiUnmountEscalateAfterMs, 0);
  const never = await parseAgentConfig("a.hcl", 'client {\n  csi_unmount_escalate_after = "0s"\n}\n');
  assert.equal(never.csiUnmountEscalateAfterMs, 0);
  assert.equal(parseAgentArgs(["-dev"]).csiUnmountEscalateAfterMs, null, "default: the client's 10 min");
  assert.throws(
    () => parseAgentArgs(["-dev", "-csi-unmount-escalate-after=soon"]),
    /-csi-unmount-escalate-after/,
  );
});
