/**
 * ClientCSI.NodeVolumeState (issue 28): what the node's state DB holds of one alloc's use of one
 * volume — a stub (mounted), a pending release, or an alloc that has not finished here — answered
 * through the handler the agent installs, from a real (in-memory) state DB.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { StateDB } from "../../../src/client/state/state_db.js";
import { registerNodeVolumeHandlers, nodeVolumeAccess } from "../../../src/client/rpc/client_csi_node.js";
import type { ClientCsiPeer } from "../../../src/client/rpc/client_csi_peer.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { NodeVolumeStateResponse } from "../../../src/structs/rpc_volume_state.js";
import { nodeHoldsNothing } from "../../../src/structs/rpc_volume_state.js";
import { allocOf } from "../../builders/alloc.js";
import { csiJob } from "../../builders/job.js";
import { stub } from "../../builders/client_records.js";

function setup() {
  const db = StateDB.open(":memory:");
  const access = nodeVolumeAccess({
    stateDb: db,
    registry: { get: () => undefined },
    volumeManager: {
      expandVolume: () => Promise.reject(new Error("unused")),
      unmountVolume: () => Promise.reject(new Error("unused")),
    },
  });
  let handler: ((req: unknown, signal: AbortSignal) => Promise<unknown>) | undefined;
  const peer: ClientCsiPeer = {
    handle: (method, fn) => {
      if (method === "ClientCSI.NodeVolumeState") handler = fn as typeof handler;
    },
  };
  registerNodeVolumeHandlers(peer, access, nullLogger);
  const ask = (allocId: string, volumeId = "vol1", namespace = "default") =>
    handler!(
      { Namespace: namespace, VolumeID: volumeId, AllocID: allocId },
      new AbortController().signal,
    ) as Promise<NodeVolumeStateResponse>;
  return { db, ask };
}

const none = { Mounted: false, ReleasePending: false, AllocActive: false };

test("node volume state: nothing for an alloc the node never knew", async () => {
  const { ask } = setup();
  assert.deepEqual(await ask("a1"), none);
  assert.equal(nodeHoldsNothing(none), true);
});

test("node volume state: a stub, a pending release, an unfinished alloc each hold the claim", async () => {
  const { db, ask } = setup();
  const s = stub({ volumeId: "vol1", namespace: "default" });
  const alloc = allocOf(csiJob("j"), "n1");
  db.putAlloc(alloc);
  // Known, no status yet (its runner just started): active.
  assert.deepEqual(await ask(alloc.ID), { ...none, AllocActive: true });
  db.putAllocClientUpdate({ ID: alloc.ID, ClientStatus: "pending", ClientDescription: "", TaskStates: {} });
  assert.deepEqual(await ask(alloc.ID), { ...none, AllocActive: true });
  db.putVolumeStubs(alloc.ID, { data: s });
  db.putAllocClientUpdate({ ID: alloc.ID, ClientStatus: "complete", ClientDescription: "", TaskStates: {} });
  assert.deepEqual(await ask(alloc.ID), { ...none, Mounted: true });
  // Another volume, or the same ID in another namespace, is not this one.
  assert.deepEqual(await ask(alloc.ID, "vol2"), none);
  assert.deepEqual(await ask(alloc.ID, "vol1", "other"), none);
  // Postrun: the stub became a pending release; unmounted or not, the node still finishes it.
  db.putPendingRelease(alloc.ID, "data", { stub: s, unmounted: false });
  db.deleteVolumeStub(alloc.ID, "data");
  assert.deepEqual(await ask(alloc.ID), { ...none, ReleasePending: true });
  db.putPendingRelease(alloc.ID, "data", { stub: s, unmounted: true });
  assert.deepEqual(await ask(alloc.ID), { ...none, ReleasePending: true });
  // Released: nothing is left; the finished alloc holds nothing.
  db.completeRelease(alloc.ID, "data");
  const after = await ask(alloc.ID);
  assert.deepEqual(after, none);
  assert.equal(nodeHoldsNothing(after), true);
});
