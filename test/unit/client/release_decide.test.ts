/**
 * The client release's step decision (release_decide.ts), on plain data: the node step before the
 * server's, through the plugin when it is registered, waiting for it when it is not, without it
 * only after the wait, and nothing on the node once the record says unmounted.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  nextClientReleaseStep,
  reportedStep,
  stepOfCsiMethod,
  type ReleaseFacts,
} from "../../../src/client/allocrunner/release_decide.js";
import { BerthError } from "../../../src/structs/errors.js";

const facts = (f: Partial<ReleaseFacts>): ReleaseFacts => ({
  unmounted: false,
  plugin: "registered",
  serverReleased: false,
  ...f,
});

test("release decision: unmount through a registered plugin first", () => {
  assert.equal(nextClientReleaseStep(facts({})), "unmount");
});

test("release decision: a missing plugin is waited for, then released without only once waited out", () => {
  assert.equal(nextClientReleaseStep(facts({ plugin: "missing" })), "wait-plugin");
  assert.equal(nextClientReleaseStep(facts({ plugin: "waited-out" })), "release-without-plugin");
});

test("release decision: once unmounted (by this release or a detach) only the server step is left", () => {
  for (const plugin of ["registered", "missing", "waited-out"] as const) {
    assert.equal(nextClientReleaseStep(facts({ unmounted: true, plugin })), "server-unpublish");
    assert.equal(nextClientReleaseStep(facts({ unmounted: true, plugin, serverReleased: true })), "done");
  }
});

test("release decision: the server step never comes before the node step", () => {
  // serverReleased without unmounted cannot happen; if it did, the node step still comes first.
  assert.equal(nextClientReleaseStep(facts({ serverReleased: true })), "unmount");
});

test("release decision: the status step of each failing step", () => {
  const err = new BerthError("ERR_CSI_INTERNAL", "CSI NodeUnstageVolume failed: INTERNAL: x");
  // An unmount error that did not come out of a CSI call is labelled by the step, not its text.
  assert.equal(reportedStep("unmount", err), "node-unpublish");
  assert.equal(reportedStep("wait-plugin", err), "wait-plugin");
  assert.equal(reportedStep("release-without-plugin", err), "wait-plugin");
  assert.equal(reportedStep("server-unpublish", err), "server-unpublish");
  assert.equal(stepOfCsiMethod("NodeUnstageVolume"), "node-unstage");
  assert.equal(stepOfCsiMethod("NodeUnpublishVolume"), "node-unpublish");
  assert.equal(stepOfCsiMethod("finding the node plugin"), undefined);
});
