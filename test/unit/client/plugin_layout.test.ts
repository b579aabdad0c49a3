/** Where a plugin task's socket and volumes live (plugin_layout.ts), as a pure function. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { pluginLayout, socketPathProblem } from "../../../src/client/allocrunner/taskrunner/plugin_layout.js";

const DATA = "/var/lib/berth";
const PLUGIN = { ID: "hostpath", Type: "monolith" as const, MountDir: "/csi", StagePublishBaseDir: "" };
const IDS = { allocId: "0b7e2f1c-1111-2222-3333-444455556666", taskName: "plugin" };
const HOST = "/var/lib/berth/client/csi/monolith/hostpath";

test("exec, stage_publish_base_dir unset: socket dir of this task at mount_dir, plugin dir at /local/csi", () => {
  const l = pluginLayout(DATA, IDS, PLUGIN, true);
  assert.match(l.socketDir, /^\/var\/lib\/berth\/client\/csi\/plugins\/[0-9a-f]{16}$/);
  assert.equal(l.socketPath, `${l.socketDir}/csi.sock`);
  assert.deepEqual(l.mounts, [
    { hostPath: l.socketDir, taskPath: "/csi", readOnly: false, propagation: "private" },
    { hostPath: HOST, taskPath: "/local/csi", readOnly: false, propagation: "bidirectional" },
  ]);
  assert.equal(l.endpoint, "unix:///csi/csi.sock");
  assert.deepEqual([l.hostDir, l.mountDir, l.stagePublishBaseDir], [HOST, "/csi", "/local/csi"]);
  const successor = pluginLayout(
    DATA,
    { ...IDS, allocId: "9f00aa11-1111-2222-3333-444455556666" },
    PLUGIN,
    true,
  );
  assert.notEqual(successor.socketPath, l.socketPath, "a successor never shares the old alloc's socket");
  assert.equal(successor.hostDir, l.hostDir, "but shares the plugin dir");
});

test("exec, stage_publish_base_dir = mount_dir: one bidirectional bind, the socket in the plugin dir", () => {
  const l = pluginLayout(DATA, IDS, { ...PLUGIN, StagePublishBaseDir: "/csi/" }, true);
  assert.deepEqual(l.mounts, [
    { hostPath: HOST, taskPath: "/csi", readOnly: false, propagation: "bidirectional" },
  ]);
  assert.equal(l.socketPath, `${HOST}/csi.sock`);
  assert.equal(l.stagePublishBaseDir, "/csi");
});

test("raw_exec: nothing bound, the plugin gets host paths and its own socket dir", () => {
  const l = pluginLayout(DATA, IDS, { ...PLUGIN, StagePublishBaseDir: "/local/x" }, false);
  assert.deepEqual(l.mounts, []);
  assert.equal(l.endpoint, `unix://${l.socketPath}`);
  assert.match(l.socketPath, /\/client\/csi\/plugins\/[0-9a-f]{16}\/csi\.sock$/);
  assert.deepEqual([l.mountDir, l.stagePublishBaseDir], [HOST, HOST]);
});

test("a socket path past the unix limit is refused, naming the path", () => {
  assert.equal(socketPathProblem(pluginLayout(DATA, IDS, PLUGIN, true).socketPath), null);
  const long = `/${"d".repeat(120)}/csi.sock`;
  assert.match(socketPathProblem(long) ?? "", /is 130 bytes, longer than the 107 a unix socket allows/);
});
