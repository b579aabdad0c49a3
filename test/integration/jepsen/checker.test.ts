/**
 * The Jepsen checker's pure parts on hand-made records: overlapping writers are found and named,
 * writers in turn are not; a ControllerPublish to a second node while attached is found (also when
 * the plugin refused it), one after the unpublish is not; node call order is judged per node.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { CallRecord } from "../../../src/csi/hostpath/call_log.js";
import {
  doubleRunning,
  lostAcks,
  nodeCallOrder,
  parseWriteLog,
  publishViolations,
  writerOverlaps,
} from "./checker.js";

const A = "aaaaaaaa-0000-0000-0000-000000000001";
const B = "bbbbbbbb-0000-0000-0000-000000000002";
const s = (sec: number) => String(BigInt(1_700_000_000 + sec) * 1_000_000_000n);

test("writerOverlaps: allocs writing in turn pass; interleaved writers are named with the window", () => {
  const inTurn = parseWriteLog(
    [`${A} ${s(0)}`, `${A} ${s(1)}`, `${B} ${s(2)}`, `${B} ${s(3)}`, ""].join("\n"),
  );
  assert.deepEqual(inTurn.bad, []);
  assert.deepEqual(writerOverlaps(inTurn.writes), []);

  const both = parseWriteLog([`${A} ${s(0)}`, `${B} ${s(1)}`, `${A} ${s(2)}`, `${B} ${s(3)}`].join("\n"));
  const found = writerOverlaps(both.writes);
  assert.equal(found.length, 1);
  assert.match(found[0]!, new RegExp(`allocs ${A} and ${B} both wrote the volume for 1000 ms`));
  assert.match(found[0]!, /1 and 1 writes in that window/);
});

test("parseWriteLog: a torn line is reported, not counted", () => {
  const { writes, bad } = parseWriteLog(`${A} ${s(0)}\n${B} 17`);
  assert.equal(writes.length, 1);
  assert.deepEqual(bad, [`${B} 17`]);
});

const call = (method: string, node: string, code = "OK", extra: Partial<CallRecord> = {}): CallRecord => ({
  time: 0,
  method,
  volume_id: "v",
  node_id: node,
  code,
  ...extra,
});

test("publishViolations: a publish to a second node while attached, even refused, is a violation", () => {
  const ok = [
    call("ControllerPublishVolume", "A"),
    call("ControllerPublishVolume", "A"),
    call("ControllerUnpublishVolume", "A"),
    call("ControllerPublishVolume", "B"),
  ];
  assert.deepEqual(publishViolations(ok), []);
  const twice = [call("ControllerPublishVolume", "A"), call("ControllerPublishVolume", "B")];
  assert.equal(publishViolations(twice).length, 1);
  const refused = [
    call("ControllerPublishVolume", "A"),
    call("ControllerPublishVolume", "B", "FAILED_PRECONDITION"),
  ];
  assert.match(publishViolations(refused)[0]!, /→ B\) FAILED_PRECONDITION while attached to A/);
  const injected = [
    call("ControllerPublishVolume", "A"),
    call("ControllerPublishVolume", "B", "FAILED_PRECONDITION", { fault: true }),
  ];
  assert.deepEqual(publishViolations(injected), [], "an injected failure never reached the handler");
});

test("nodeCallOrder: each node's calls are checked apart", () => {
  const calls = [
    call("NodeStageVolume", "B", "OK", { target: "/s" }),
    call("NodePublishVolume", "B", "OK", { target: "/b" }),
    call("NodeStageVolume", "A", "OK", { target: "/s" }),
    call("NodePublishVolume", "A", "OK", { target: "/a" }),
    call("NodeUnpublishVolume", "B", "OK", { target: "/b" }),
    call("NodeUnstageVolume", "B", "OK", { target: "/s" }),
    call("NodeUnpublishVolume", "A", "OK", { target: "/a" }),
    call("NodeUnstageVolume", "A", "OK", { target: "/s" }),
  ];
  assert.deepEqual(nodeCallOrder(calls), []);
  assert.match(nodeCallOrder(calls.slice(0, 6)).join("\n"), /node A: v: \/a still published at the end/);
});

test("doubleRunning and lostAcks", () => {
  assert.deepEqual(doubleRunning([{ at: 0, server: "s0", running: [A] }]), []);
  assert.equal(doubleRunning([{ at: 0, server: "s0", running: [A, B] }]).length, 1);
  const ops = [
    { kind: "job-register" as const, id: "j1", via: "s0", outcome: "ok" },
    { kind: "job-register" as const, id: "j2", via: "s1", outcome: "TimeoutError" },
  ];
  assert.deepEqual(
    lostAcks(ops, () => false),
    ["job-register j1 (acknowledged by s0) is not visible at the end"],
  );
});
