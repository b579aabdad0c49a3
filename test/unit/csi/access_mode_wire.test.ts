import { test } from "node:test";
import assert from "node:assert/strict";
import { csiCapabilityOf, wireAccessMode } from "../../../src/csi/capability_of.js";
import { accessModeFromWire, accessModeToWire, capabilityToWire } from "../../../src/csi/convert.js";
import { ACCESS_MODES } from "../../../src/structs/volume.js";
import { capabilityProblem } from "../../../src/csi/hostpath/access_modes.js";

test("every access mode has its own CSI name, both ways", () => {
  const names = ACCESS_MODES.map(accessModeToWire);
  assert.equal(new Set(names).size, 7);
  for (const m of ACCESS_MODES) assert.equal(accessModeFromWire(accessModeToWire(m)), m);
  assert.equal(accessModeToWire("single-node-single-writer"), "SINGLE_NODE_SINGLE_WRITER");
  assert.equal(accessModeToWire("single-node-multi-writer"), "SINGLE_NODE_MULTI_WRITER");
});

test("CSI 1.5's single-node modes go to a plugin without SINGLE_NODE_MULTI_WRITER as SINGLE_NODE_WRITER", () => {
  for (const m of ACCESS_MODES) {
    const legacy = wireAccessMode(m, false);
    const modern = wireAccessMode(m, true);
    assert.equal(modern, m);
    if (m === "single-node-single-writer" || m === "single-node-multi-writer")
      assert.equal(legacy, "single-node-writer");
    else assert.equal(legacy, m);
  }
  const cap = capabilityToWire(csiCapabilityOf("single-node-multi-writer", "file-system", null, false));
  assert.equal(cap.access_mode?.mode, "SINGLE_NODE_WRITER");
  const cap2 = capabilityToWire(csiCapabilityOf("single-node-multi-writer", "file-system", null, true));
  assert.equal(cap2.access_mode?.mode, "SINGLE_NODE_MULTI_WRITER");
});

test("csi-hostpath refuses the CSI 1.5 modes unless it advertises SINGLE_NODE_MULTI_WRITER", () => {
  const mount = { fs_type: "", mount_flags: [], volume_mount_group: "" };
  for (const mode of ["SINGLE_NODE_SINGLE_WRITER", "SINGLE_NODE_MULTI_WRITER"]) {
    const c = { mount, access_mode: { mode } } as never;
    assert.match(capabilityProblem({}, c) ?? "", /SINGLE_NODE_MULTI_WRITER capability/);
    assert.equal(capabilityProblem({ singleNodeMultiWriter: true }, c), null);
  }
  assert.equal(capabilityProblem({}, { mount, access_mode: { mode: "SINGLE_NODE_WRITER" } }), null);
});
