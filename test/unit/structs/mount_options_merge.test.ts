import { test } from "node:test";
import assert from "node:assert/strict";
import { mergeMountOptions } from "../../../src/structs/mount_options_merge.js";

const vol = { FSType: "ext4", MountFlags: ["noatime", "nodiratime"] };

test("the volume's mount options are the defaults", () => {
  assert.deepEqual(mergeMountOptions(vol, null), vol);
  assert.deepEqual(mergeMountOptions(vol, { FSType: "", MountFlags: [] }), vol);
});

test("the job's fs_type replaces the volume's; the volume's flags stay when the job gives none", () => {
  assert.deepEqual(mergeMountOptions(vol, { FSType: "xfs", MountFlags: [] }), {
    FSType: "xfs",
    MountFlags: ["noatime", "nodiratime"],
  });
});

test("the job's mount_flags replace the volume's (Nomad's Merge does not append)", () => {
  assert.deepEqual(mergeMountOptions(vol, { FSType: "", MountFlags: ["ro"] }), {
    FSType: "ext4",
    MountFlags: ["ro"],
  });
});

test("without volume options the job's are used as they are; neither gives none", () => {
  assert.deepEqual(mergeMountOptions(null, { FSType: "xfs", MountFlags: ["ro"] }), {
    FSType: "xfs",
    MountFlags: ["ro"],
  });
  assert.equal(mergeMountOptions(undefined, null), null);
});

test("the answer shares no array with its inputs", () => {
  const job = { FSType: "", MountFlags: ["ro"] };
  const merged = mergeMountOptions(vol, job)!;
  merged.MountFlags.push("x");
  assert.deepEqual(job.MountFlags, ["ro"]);
  const kept = mergeMountOptions(vol, null)!;
  kept.MountFlags.push("x");
  assert.deepEqual(vol.MountFlags, ["noatime", "nodiratime"]);
});

test("the job's mount group and its policy override the volume's, field by field", () => {
  const grouped = { ...vol, MountGroup: "1000", MountGroupPolicy: "always" as const };
  assert.deepEqual(mergeMountOptions(grouped, { FSType: "", MountFlags: [] }), grouped);
  assert.deepEqual(
    mergeMountOptions(grouped, { FSType: "", MountFlags: [], MountGroupPolicy: "on_root_mismatch" }),
    { ...grouped, MountGroupPolicy: "on_root_mismatch" },
  );
  assert.deepEqual(mergeMountOptions(null, { FSType: "", MountFlags: [], MountGroup: "2000" }), {
    FSType: "",
    MountFlags: [],
    MountGroup: "2000",
  });
});
