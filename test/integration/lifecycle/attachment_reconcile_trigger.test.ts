/**
 * The attachment reconciler triggered by a refused claim, end to end (issue 33 item 4; rig:
 * attachment_fixture.ts, the reconciler's schedule set to an hour so only the trigger can act):
 * (c) the provider still lists the single-node-writer volume attached to a node berth has no claim
 *     on; a job's claim is refused FAILED_PRECONDITION ("published to another node"), which makes
 *     the leader reconcile the plugin at once: the stale attachment is unpublished, the node's
 *     claim retry succeeds and the task runs with the volume attached to its node.
 * Fails with the reconciler left out of the leader's loops (the claim is refused until the bound).
 */
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { Steps } from "../restart/restart_fixtures.js";
import { NODE_EXT_ID, ReconcileRig } from "./attachment_fixture.js";

const steps = new Steps();
let rig: ReconcileRig;

before(async () => {
  rig = await ReconcileRig.start("berth-att-trigger-", { intervalMs: 3_600_000 });
});

after(async () => {
  const left = await rig.close(["app"], steps.failed);
  assert.deepEqual(left.mounts, [], "nothing was left mounted");
});

steps.step("(c) a claim refused as published elsewhere triggers a reconcile, then succeeds", async () => {
  rig.addAttachment("ghost-node");
  const alloc = await rig.runApp("app", 45_000);
  assert.deepEqual(rig.attachedNodes(), [NODE_EXT_ID], "the ghost attachment is gone, ours is there");
  const made = rig.calls().map((c) => `${c.method}:${c.node_id ?? ""}:${c.code}`);
  const refused = made.indexOf(`ControllerPublishVolume:${NODE_EXT_ID}:FAILED_PRECONDITION`);
  const unpublished = made.indexOf("ControllerUnpublishVolume:ghost-node:OK");
  const published = made.indexOf(`ControllerPublishVolume:${NODE_EXT_ID}:OK`);
  assert.ok(refused >= 0 && refused < unpublished && unpublished < published, made.join(", "));
  const rec = (await rig.volume()).AttachmentReconcile!;
  assert.deepEqual([rec.Action, rec.Outcome, rec.ExternalNodeID], ["unpublish-stale", "done", "ghost-node"]);
  assert.ok(alloc.ID);
});
