/** The checks on node answers to controller calls (structs/controller_answer_validate.ts), per method. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkControllerAnswer } from "../../../src/structs/controller_answer_validate.js";
import { isBerthError } from "../../../src/structs/errors.js";
import type { ClientMethods } from "../../../src/structs/rpc.js";

function refused(method: keyof ClientMethods, answer: unknown, field: string): void {
  assert.throws(
    () => checkControllerAnswer(method, answer),
    (e: unknown) => isBerthError(e) && e.code === "ERR_CSI_BAD_ANSWER" && e.field === field,
    `${method} ${JSON.stringify(answer)?.slice(0, 80)} should be refused naming ${field}`,
  );
}

test("each controller answer berth reads is checked, naming the field", () => {
  refused("ClientCSI.ControllerPublishVolume", { PublishContext: { dev: 1 } }, "PublishContext.dev");
  refused("ClientCSI.ControllerPublishVolume", { PublishContext: ["a"] }, "PublishContext");
  refused("ClientCSI.ControllerPublishVolume", null, "answer");
  refused("ClientCSI.ControllerExpandVolume", { CapacityBytes: 1.5 }, "CapacityBytes");
  refused(
    "ClientCSI.ControllerExpandVolume",
    { CapacityBytes: 1, NodeExpansionRequired: "yes" },
    "NodeExpansionRequired",
  );
  refused("ClientCSI.ControllerCreateSnapshot", { ID: "", SizeBytes: 1 }, "Snapshot.ID");
  refused("ClientCSI.ControllerCreateSnapshot", { ID: "s", CreateTime: -1 }, "Snapshot.CreateTime");
  refused(
    "ClientCSI.ControllerListSnapshots",
    { Entries: [{ ID: "s", SizeBytes: -1 }] },
    "Entries[0].SizeBytes",
  );
  refused("ClientCSI.ControllerListVolumes", { Entries: {}, NextToken: "" }, "Entries");
  refused(
    "ClientCSI.ControllerListVolumes",
    { Entries: [{ ExternalID: "v", PublishedExternalNodeIDs: [""] }] },
    "Entries[0].PublishedExternalNodeIDs[0]",
  );
  refused("ClientCSI.ControllerGetVolume", { Condition: { Abnormal: 1 } }, "Condition.Abnormal");
  refused("ClientCSI.ControllerGetVolume", { Condition: { Message: "m".repeat(5000) } }, "Condition.Message");
});

test("well-formed answers pass with only the fields berth reads; absent optional fields get defaults", () => {
  assert.deepEqual(
    checkControllerAnswer("ClientCSI.ControllerCreateVolume", {
      ExternalVolumeID: "nfs#server#/exports/a",
      CapacityBytes: 0,
      VolumeContext: { k: "v" },
      Topologies: [{ Segments: { zone: "a" } }],
      Extra: "dropped",
    }),
    {
      ExternalVolumeID: "nfs#server#/exports/a",
      CapacityBytes: 0,
      VolumeContext: { k: "v" },
      Topologies: [{ Segments: { zone: "a" } }],
    },
  );
  assert.deepEqual(checkControllerAnswer("ClientCSI.ControllerPublishVolume", {}), { PublishContext: {} });
  assert.deepEqual(checkControllerAnswer("ClientCSI.ControllerGetVolume", { ExternalID: "v" }), {
    ExternalID: "v",
    PublishedExternalNodeIDs: [],
    Condition: null,
  });
  // Methods whose answer berth does not read pass through.
  assert.deepEqual(checkControllerAnswer("ClientCSI.ControllerDeleteVolume", {}), {});
});
