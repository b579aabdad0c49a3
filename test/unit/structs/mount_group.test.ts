/** Mount group options and decisions (structs/mount_group.ts) and their place in mount_options. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { checkMountGroup, mountGroupRoute, needsOwnershipWalk } from "../../../src/structs/mount_group.js";
import { mountOptions } from "../../../src/structs/volume_validate.js";

test("a mount group is a numeric gid; the policy needs a group and is one of two", () => {
  assert.deepEqual(checkMountGroup("M", undefined, undefined), {});
  assert.deepEqual(checkMountGroup("M", "1000", "on_root_mismatch"), {
    MountGroup: "1000",
    MountGroupPolicy: "on_root_mismatch",
  });
  assert.deepEqual(checkMountGroup("M", 65534, undefined), { MountGroup: "65534" });
  assert.throws(() => checkMountGroup("M", "users", undefined), /M\.MountGroup: must be a numeric group ID/);
  assert.throws(() => checkMountGroup("M", "4294967295", undefined), /M\.MountGroup/);
  assert.throws(() => checkMountGroup("M", "-1", undefined), /M\.MountGroup/);
  assert.throws(
    () => checkMountGroup("M", "1000", "sometimes"),
    /M\.MountGroupPolicy: must be one of always/,
  );
  assert.throws(() => checkMountGroup("M", undefined, "always"), /M\.MountGroupPolicy: is set without/);
});

test("mount_options carry the group only when set (Nomad's shape otherwise)", () => {
  assert.deepEqual(mountOptions("MO", { FSType: "ext4" }), { FSType: "ext4", MountFlags: [] });
  assert.deepEqual(mountOptions("MO", { MountGroup: "1000" }), {
    FSType: "",
    MountFlags: [],
    MountGroup: "1000",
  });
  assert.throws(() => mountOptions("MO", { MountGroup: "wheel" }), /MO\.MountGroup/);
});

test("who applies the group: the plugin with VOLUME_MOUNT_GROUP, else berth unless read-only", () => {
  assert.equal(mountGroupRoute(undefined, true, false), "none");
  assert.equal(mountGroupRoute("1000", true, false), "plugin");
  assert.equal(mountGroupRoute("1000", true, true), "plugin");
  assert.equal(mountGroupRoute("1000", false, false), "berth");
  assert.equal(mountGroupRoute("1000", false, true), "none");
});

test("on_root_mismatch walks only when the root lacks the group or its bits; always walks", () => {
  const right = { gid: 1000, mode: 0o42775 };
  assert.equal(needsOwnershipWalk("on_root_mismatch", right, 1000), false);
  assert.equal(needsOwnershipWalk("on_root_mismatch", { ...right, gid: 0 }, 1000), true);
  assert.equal(needsOwnershipWalk("on_root_mismatch", { ...right, mode: 0o40775 }, 1000), true, "no setgid");
  assert.equal(needsOwnershipWalk("always", right, 1000), true);
  assert.equal(needsOwnershipWalk(undefined, right, 1000), true, "always is the default");
});
