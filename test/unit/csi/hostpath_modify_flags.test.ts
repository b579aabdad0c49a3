/** csi-hostpath's --expansion, --modify-volume and --volume-mount-group: parsing and what each advertises. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseHostpathFlags } from "../../../src/csi/hostpath/flags.js";
import {
  storageControllerCapabilities,
  storageNodeCapabilities,
  storagePluginCapabilities,
} from "../../../src/csi/hostpath/storage_ops.js";

const base = ["--endpoint=unix:///tmp/x.sock", "--state-dir=/tmp/s", "--node-id=n1"];
const names = (caps: { rpc: { type: string } }[]) => caps.map((c) => c.rpc.type);

test("defaults: ONLINE expansion, no MODIFY_VOLUME, no VOLUME_MOUNT_GROUP (as before the flags)", () => {
  const c = parseHostpathFlags(base, {});
  assert.deepEqual(storagePluginCapabilities(c), [{ volume_expansion: { type: "ONLINE" } }]);
  assert.ok(names(storageControllerCapabilities(c)).includes("EXPAND_VOLUME"));
  assert.ok(!names(storageControllerCapabilities(c)).includes("MODIFY_VOLUME"));
  assert.deepEqual(names(storageNodeCapabilities(c)), [
    "EXPAND_VOLUME",
    "GET_VOLUME_STATS",
    "VOLUME_CONDITION",
  ]);
});

test("--expansion=offline|none, --modify-volume, --volume-mount-group", () => {
  const off = parseHostpathFlags(
    [...base, "--expansion=offline", "--modify-volume", "--volume-mount-group"],
    {},
  );
  assert.deepEqual(storagePluginCapabilities(off), [{ volume_expansion: { type: "OFFLINE" } }]);
  assert.ok(names(storageControllerCapabilities(off)).includes("MODIFY_VOLUME"));
  assert.ok(names(storageNodeCapabilities(off)).includes("VOLUME_MOUNT_GROUP"));
  const none = parseHostpathFlags([...base, "--expansion", "none"], {});
  assert.deepEqual(storagePluginCapabilities(none), []);
  assert.ok(!names(storageControllerCapabilities(none)).includes("EXPAND_VOLUME"));
  assert.ok(!names(storageNodeCapabilities(none)).includes("EXPAND_VOLUME"));
  assert.throws(
    () => parseHostpathFlags([...base, "--expansion=sometimes"], {}),
    /--expansion: expected one of/,
  );
});
