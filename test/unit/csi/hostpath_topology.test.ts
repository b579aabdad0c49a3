import { test } from "node:test";
import assert from "node:assert/strict";
import { accessibleTopology, requestedTopology } from "../../../src/csi/hostpath/topology.js";

test("hostpath topology: a new volume takes the first preferred, else the first requisite topology", () => {
  const seg = (zone: string) => ({ segments: { zone } });
  assert.deepEqual(requestedTopology({ accessibility_requirements: null }), null);
  assert.deepEqual(
    requestedTopology({ accessibility_requirements: { requisite: [seg("a"), seg("b")], preferred: [] } }),
    [{ zone: "a" }],
  );
  assert.deepEqual(
    requestedTopology({
      accessibility_requirements: { requisite: [seg("a"), seg("b")], preferred: [seg("b")] },
    }),
    [{ zone: "b" }],
  );
});

test("hostpath topology: the recorded topology wins over the controller's own; none means anywhere", () => {
  assert.deepEqual(accessibleTopology([{ zone: "b" }], { zone: "a" }), [{ segments: { zone: "b" } }]);
  assert.deepEqual(accessibleTopology(undefined, { zone: "a" }), [{ segments: { zone: "a" } }]);
  assert.deepEqual(accessibleTopology(undefined, {}), []);
});
