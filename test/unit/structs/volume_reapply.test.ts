/** The re-apply decisions (structs/volume_reapply.ts): immutable fields, mutable parameters, expansion. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { CSIControllerInfo } from "../../../src/structs/csi_terms.js";
import { newVolume, type VolumeClaim } from "../../../src/structs/volume.js";
import {
  decideExpansion,
  immutableFieldChanges,
  mutableParametersChange,
} from "../../../src/structs/volume_reapply.js";

const stored = newVolume({
  ID: "v",
  Name: "v-name",
  PluginID: "p",
  ExternalID: "ext",
  Parameters: { type: "ssd" },
  MutableParameters: { iops: "100" },
});

const claim = (alloc: string): VolumeClaim => ({
  AllocationID: alloc,
  NodeID: "n1",
  ExternalNodeID: "x1",
  Mode: "write",
  AccessMode: "single-node-writer",
  AttachmentMode: "file-system",
  State: "taken",
});

const controller = (over: Partial<CSIControllerInfo>): CSIControllerInfo => ({
  SupportsCreateDelete: true,
  SupportsAttachDetach: false,
  SupportsListVolumes: false,
  SupportsGetCapacity: false,
  SupportsCreateDeleteSnapshot: false,
  SupportsListSnapshots: false,
  SupportsClone: false,
  SupportsReadOnlyAttach: false,
  SupportsExpand: true,
  SupportsListVolumesAttachedNodes: false,
  SupportsCondition: false,
  SupportsGet: false,
  ...over,
});

test("immutable fields: unset keeps the stored value, a change names the field", () => {
  const spec = newVolume({ ID: "v", PluginID: "p" });
  assert.deepEqual(immutableFieldChanges(stored, spec), [], "an empty spec changes nothing");
  assert.deepEqual(immutableFieldChanges(stored, { ...spec, Parameters: { type: "ssd" } }), []);
  const changes = immutableFieldChanges(stored, {
    ...spec,
    Name: "other",
    Parameters: { type: "hdd" },
    SnapshotID: "snap",
  });
  assert.deepEqual(
    changes.map((c) => c.field),
    ["Name", "SnapshotID", "Parameters"],
  );
  assert.match(changes[2]!.message, /mutable_parameters/);
});

test("mutable parameters: unset or equal is nothing to do; a change answers the new set", () => {
  const spec = newVolume({ ID: "v", PluginID: "p" });
  assert.equal(mutableParametersChange(stored, spec), null);
  assert.equal(mutableParametersChange(stored, { ...spec, MutableParameters: { iops: "100" } }), null);
  assert.deepEqual(mutableParametersChange(stored, { ...spec, MutableParameters: { iops: "500" } }), {
    iops: "500",
  });
  const fresh = newVolume({ ID: "w", PluginID: "p", ExternalID: "e" });
  assert.deepEqual(mutableParametersChange(fresh, { ...spec, MutableParameters: { a: "1" } }), { a: "1" });
});

test("expansion: unused volumes expand offline; in use needs ONLINE, else a refusal naming the users", () => {
  const offline = controller({});
  const online = controller({ SupportsOnlineExpand: true });
  assert.deepEqual(decideExpansion(stored, [offline]), { kind: "expand", requires: "SupportsExpand" });
  const used = { ...stored, WriteClaims: { a1: claim("a1") }, PastClaims: { a0: claim("a0") } };
  assert.deepEqual(decideExpansion(used, [offline, online]), {
    kind: "expand",
    requires: "SupportsOnlineExpand",
  });
  const refused = decideExpansion(used, [offline, null]);
  assert.equal(refused.kind, "refuse");
  assert.match(
    refused.kind === "refuse" ? refused.message : "",
    /in use by allocations a0, a1 .*only offline.*stop the jobs using it/,
  );
  // No expansion at all: left to the controller call's own "does not support Expand".
  assert.deepEqual(decideExpansion(used, [controller({ SupportsExpand: false })]), {
    kind: "expand",
    requires: "SupportsExpand",
  });
});
