/**
 * The strict decoder of test/nomadapi: what Nomad's Go structs take, and the failures (with the
 * JSON path) for what they do not. The integration test's strictness rests on these.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { decodeGo, GoDecodeError } from "../../nomadapi/go_decode.js";
import { goStruct, goZero, GO_ZERO_TIME } from "../../nomadapi/go_client.js";

const fails = (v: unknown, type: string, re: RegExp, extra = {}) =>
  assert.throws(
    () => decodeGo(v, type, "$", extra),
    (e: unknown) => e instanceof GoDecodeError && re.test(e.message),
  );

test("Go zero values are what encoding/json writes, and decode back", () => {
  const vol = goZero("CSIVolume") as Record<string, unknown>;
  assert.equal(vol.Namespace, "");
  assert.equal(vol.ResourceExhausted, GO_ZERO_TIME);
  assert.equal(vol.MountOptions, null);
  assert.equal(vol.Capacity, 0);
  assert.equal("ExtraKeysHCL" in vol, false, 'json:"-" fields are never written');
  decodeGo(vol, "CSIVolume");
  const node = goZero("Node") as Record<string, unknown>;
  decodeGo(node, "Node");
  // DrainStrategy embeds DrainSpec: its fields are promoted.
  decodeGo(
    { Deadline: 1, IgnoreSystemJobs: false, ForceDeadline: GO_ZERO_TIME, StartedAt: GO_ZERO_TIME },
    "DrainStrategy",
  );
  assert.equal(goStruct("CSIMountOptions", { FSType: "ext4" }).FSType, "ext4");
});

test("unknown fields, wrong types and null where Go has no nil fail with the path", () => {
  fails(
    { ID: "v", ReadClaims: {} },
    "CSIVolume",
    /\$: unknown field "ReadClaims" in Go struct api.CSIVolume/,
  );
  fails({ ResourceExhausted: null }, "CSIVolume", /\$\.ResourceExhausted: want an RFC 3339 time/);
  fails({ ResourceExhausted: 0 }, "CSIVolumeListStub", /ResourceExhausted: want an RFC 3339 time/);
  fails(
    { Nodes: { n1: { UpdateTime: 1700000000000 } } },
    "CSIPlugin",
    /\$\.Nodes\["n1"\]\.UpdateTime: want an RFC 3339/,
  );
  fails({ StatusUpdatedAt: 1.5 }, "Node", /StatusUpdatedAt: want an integer/);
  fails({ CreateIndex: -1 }, "CSIVolume", /CreateIndex: want an integer in \[0,/);
  fails({ Name: null }, "CSIVolume", /Name: want a string/);
  fails([{ ID: 3 }], "[]*CSIVolumeListStub", /\$\[0\]\.ID: want a string/);
  fails({ id: "x" }, "CSIVolume", /unknown field "id"/);
});

test("pointers, slices and maps take null; extras are accepted only where listed", () => {
  decodeGo({ MountOptions: null, Topologies: null, Context: null }, "CSIVolume");
  decodeGo({ ID: "v", ReadClaims: {} }, "CSIVolume", "$", {
    CSIVolume: { ReadClaims: "map[string]interface{}" },
  });
  fails({ ID: "v", WriteClaims: {} }, "CSIVolume", /unknown field "WriteClaims"/, {
    CSIVolume: { ReadClaims: "map[string]interface{}" },
  });
});
