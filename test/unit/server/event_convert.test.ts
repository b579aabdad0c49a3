/**
 * From the commit feed's changes to Nomad's events (server/events/convert.ts): topics, keys,
 * FilterKeys, payload keys and the types derived from before/after; secrets redacted in payloads
 * while the records converted stay exactly as they were.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventsOf } from "../../../src/server/events/convert.js";
import type { CommittedChange } from "../../../src/server/state/commit_feed.js";
import type { CSIVolume } from "../../../src/structs/volume.js";
import { makeVolume } from "../../builders/volume.js";
import { makeNode } from "../../builders/node.js";
import { csiJob } from "../../builders/job.js";
import { allocOf } from "../../builders/alloc.js";

const one = (c: CommittedChange) => {
  const [ev] = eventsOf({ index: 7, changes: [c] });
  assert.ok(ev, "an event");
  return { ...ev, parsed: JSON.parse(ev.json) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any -- payloads
};
const put = (table: CommittedChange["table"], record: unknown, before?: unknown): CommittedChange => ({
  table,
  namespace: "default",
  id: (record as { ID: string }).ID,
  op: "put",
  record,
  ...(before === undefined ? {} : { before }),
});

test("volumes: registered, claim, abnormal, deregistered; redacted on the wire, records untouched", () => {
  const vol = makeVolume("v1", {
    Name: "data",
    Secrets: { password: "hunter2" },
    MountOptions: { FSType: "ext4", MountFlags: ["pw=hunter2"] },
  });
  const copy = structuredClone(vol);
  const reg = one(put("volumes", vol));
  assert.deepEqual(
    [reg.Topic, reg.Type, reg.Key, reg.Namespace],
    ["CSIVolume", "CSIVolumeRegistered", "v1", "default"],
  );
  assert.deepEqual(reg.parsed.FilterKeys, ["v1", "data", "p1"]);
  assert.equal(reg.parsed.Index, 7);
  assert.equal(reg.parsed.Payload.Volume.Secrets, null);
  assert.deepEqual(reg.parsed.Payload.Volume.MountOptions.MountFlags, ["[REDACTED]"]);
  assert.ok(!reg.json.includes("hunter2"));
  assert.deepEqual(vol, copy, "converting never changes the record");

  const claimed: CSIVolume = {
    ...vol,
    WriteClaims: {
      a1: {
        AllocationID: "a1",
        NodeID: "n1",
        Mode: "write",
        State: "taken",
      } as CSIVolume["WriteClaims"][string],
    },
  };
  assert.equal(one(put("volumes", claimed, vol)).Type, "CSIVolumeClaim");
  assert.equal(one(put("volumes", { ...vol, Capacity: 5 }, vol)).Type, "CSIVolumeRegistered");
  const abnormal = { ...vol, Usage: { Abnormal: true, Message: "disk failing" } };
  assert.equal(one(put("volumes", abnormal, vol)).Type, "CSIVolumeAbnormal");
  assert.equal(
    one(put("volumes", abnormal, abnormal)).Type,
    "CSIVolumeRegistered",
    "only when it turns abnormal",
  );
  // The controller's condition (ControllerGetVolume) turning abnormal is the same event, also when
  // the node's side already was; the payload keeps Nomad's shape (no ControllerCondition).
  const ctlAbnormal = { ...vol, ControllerCondition: { Abnormal: true, Message: "gone", UpdateTime: 1 } };
  const ctlEvent = one(put("volumes", ctlAbnormal, vol));
  assert.equal(ctlEvent.Type, "CSIVolumeAbnormal");
  assert.equal("ControllerCondition" in ctlEvent.parsed.Payload.Volume, false);
  const both = { ...abnormal, ControllerCondition: ctlAbnormal.ControllerCondition };
  assert.equal(one(put("volumes", both, abnormal)).Type, "CSIVolumeAbnormal");
  assert.equal(one(put("volumes", both, ctlAbnormal)).Type, "CSIVolumeAbnormal");
  assert.equal(one(put("volumes", both, both)).Type, "CSIVolumeRegistered");
  const healed = { ...vol, ControllerCondition: { Abnormal: false, Message: "ok", UpdateTime: 2 } };
  assert.equal(one(put("volumes", healed, ctlAbnormal)).Type, "CSIVolumeRegistered");
  // The attachment reconciler's record (a new correction: its Time moved) is its own event.
  const rec = {
    Action: "unpublish-stale" as const,
    Outcome: "done" as const,
    ExternalNodeID: "ghost",
    NodeID: "",
    AllocationID: "",
    Message: "unpublished",
    Time: 5,
  };
  const reconciled = { ...vol, AttachmentReconcile: rec };
  assert.equal(one(put("volumes", reconciled, vol)).Type, "CSIVolumeAttachmentReconciled");
  assert.equal(one(put("volumes", { ...reconciled, Capacity: 9 }, reconciled)).Type, "CSIVolumeRegistered");
  const again = { ...vol, AttachmentReconcile: { ...rec, Time: 6 } };
  assert.equal(one(put("volumes", again, reconciled)).Type, "CSIVolumeAttachmentReconciled");
  const gone = one({ table: "volumes", namespace: "default", id: "v1", op: "delete", before: vol });
  assert.equal(gone.Type, "CSIVolumeDeregistered");
  assert.equal(gone.parsed.Payload.Volume.Secrets, null);
  assert.deepEqual(vol, copy);
});

test("jobs, allocs, nodes: Nomad's types and payload keys", () => {
  const job = csiJob("web");
  assert.equal(one(put("jobs", job)).Type, "JobRegistered");
  assert.equal(one(put("jobs", { ...job, Stop: true }, job)).Type, "JobDeregistered");
  const purged = one({ table: "jobs", namespace: "default", id: "web", op: "delete", before: job });
  assert.deepEqual([purged.Type, purged.parsed.Payload.Deleted], ["JobDeregistered", true]);

  const alloc = allocOf(job, "n1", { ClientStatus: "pending" });
  const created = one(put("allocs", alloc));
  assert.equal(created.Type, "PlanResult");
  assert.equal(created.parsed.Payload.Allocation.Job, null, "the job is dropped, as Nomad drops it");
  assert.deepEqual(created.parsed.FilterKeys, ["web", ""]);
  assert.equal(one(put("allocs", { ...alloc, ClientStatus: "running" }, alloc)).Type, "AllocationUpdated");
  assert.equal(one(put("allocs", { ...alloc, DesiredStatus: "stop" }, alloc)).Type, "PlanResult");
  assert.equal(
    one(put("allocs", { ...alloc, DesiredTransition: { Migrate: true } }, alloc)).Type,
    "AllocationUpdateDesiredStatus",
  );
  assert.equal(
    eventsOf({ index: 1, changes: [{ ...put("allocs", alloc), op: "delete", before: alloc }] }).length,
    0,
  );

  const node = { ...makeNode("n1"), SecretIDHash: "abc" };
  const reg = one({ ...put("nodes", node), namespace: "" });
  assert.deepEqual(
    [reg.Type, reg.Namespace, reg.parsed.Payload.Node.SecretIDHash],
    ["NodeRegistration", "", undefined],
  );
  assert.equal(
    one(put("nodes", { ...node, SchedulingEligibility: "ineligible" as const }, node)).Type,
    "NodeEligibility",
  );
  assert.equal(one(put("nodes", { ...node, Status: "down" as const }, node)).Type, "NodeStreamEvent");
  assert.equal(
    one({ table: "nodes", namespace: "", id: "n1", op: "delete", before: node }).Type,
    "NodeDeregistration",
  );
});
