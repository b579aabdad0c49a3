/**
 * The attachment reconciler on its schedule, end to end (issue 33 item 4; rig: attachment_fixture.ts,
 * the reconciler every 0.5 s): the provider's own records are changed behind berth's back.
 * (a) The provider lists the volume attached to a node where berth holds no claim (a freed claim
 *     whose ControllerUnpublish never happened): it is unpublished, with a
 *     CSIVolumeAttachmentReconciled event, the record on the volume and the metric counter.
 * (b) The provider loses the attachment of a running alloc's claim: it is published again to that
 *     node, and the task keeps its volume (same alloc, still running, still writing).
 * Both fail with the reconciler left out of the leader's loops (the attachment stays / stays lost).
 */
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { openStream, type OpenStream } from "../server/event_client.js";
import { eventually } from "../../helpers/agent_process.js";
import { Steps } from "../restart/restart_fixtures.js";
import { NODE_EXT_ID, ReconcileRig } from "./attachment_fixture.js";

const steps = new Steps();
let rig: ReconcileRig;
let stream: OpenStream | undefined;

before(async () => {
  rig = await ReconcileRig.start("berth-att-reconcile-", { intervalMs: 500 });
});

after(async () => {
  stream?.close();
  const left = await rig.close(["app"], steps.failed);
  assert.deepEqual(left.mounts, [], "nothing was left mounted");
});

steps.step(
  "(a) an attachment berth holds no claim for is unpublished, with an event and a count",
  async () => {
    stream = await openStream(rig.cli.addr, `?topic=CSIVolume:vol&index=${await rig.index()}`);
    rig.addAttachment("ghost-node");
    assert.deepEqual(rig.attachedNodes(), ["ghost-node"]);
    await eventually(
      "the stale attachment to be unpublished",
      async () => (rig.attachedNodes().length === 0 ? true : undefined),
      30_000,
    );
    const frame = await stream.waitFor((f) =>
      (f.Events ?? []).some((e) => e.Type === "CSIVolumeAttachmentReconciled"),
    );
    const event = frame.Events!.find((e) => e.Type === "CSIVolumeAttachmentReconciled")!;
    assert.equal(event.Key, "vol");
    const rec = (await rig.volume()).AttachmentReconcile!;
    assert.deepEqual(
      [rec.Action, rec.Outcome, rec.ExternalNodeID, rec.AllocationID],
      ["unpublish-stale", "done", "ghost-node", ""],
    );
    assert.ok(
      rig
        .calls()
        .some(
          (c) => c.method === "ControllerUnpublishVolume" && c.node_id === "ghost-node" && c.code === "OK",
        ),
      "ControllerUnpublishVolume for the ghost node in the plugin's call log",
    );
    const metrics = await (await fetch(`${rig.cli.addr}/v1/metrics?format=prometheus`)).text();
    assert.match(
      metrics,
      /berth_server_volume_attachment_reconcile_corrections_total\{plugin_id="hostpath",action="unpublish-stale",outcome="done"\} 1/,
    );
  },
);

steps.step(
  "(b) an attachment the provider lost under a running alloc is published again; the task keeps its volume",
  async () => {
    // Starts from a provider that agrees with berth, whatever (a) left.
    if (rig.attachedNodes().includes("ghost-node")) rig.loseAttachment("ghost-node");
    const alloc = await rig.runApp("app");
    assert.deepEqual(rig.attachedNodes(), [NODE_EXT_ID]);
    const publishes = () =>
      rig.calls().filter((c) => c.method === "ControllerPublishVolume" && c.code === "OK").length;
    const before = publishes();
    rig.loseAttachment(NODE_EXT_ID);
    await eventually(
      "the lost attachment to be published again",
      async () => (rig.attachedNodes().includes(NODE_EXT_ID) && publishes() > before ? true : undefined),
      30_000,
    );
    const rec = (await rig.volume()).AttachmentReconcile!;
    assert.deepEqual(
      [rec.Action, rec.Outcome, rec.ExternalNodeID, rec.AllocationID],
      ["republish-lost", "done", NODE_EXT_ID, alloc.ID],
    );
    const allocs = (await rig.cli.get<{ ID: string; ClientStatus: string }[]>("/v1/job/app/allocations"))!;
    assert.deepEqual(
      allocs.map((a) => [a.ID, a.ClientStatus]),
      [[alloc.ID, "running"]],
      "the same alloc runs on",
    );
    const lines = rig.appLines();
    await eventually(
      "the task to keep writing into its volume",
      async () => (rig.appLines() > lines ? true : undefined),
      15_000,
    );
    assert.ok(
      !rig.calls().some((c) => c.method === "NodeUnstageVolume" || c.method === "NodeUnpublishVolume"),
      "the node's mounts were never touched",
    );
  },
);
