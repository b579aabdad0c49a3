import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { nullLogger } from "../../../src/internal/log.js";
import { faultSource, parseFaults } from "../../../src/csi/hostpath/faults.js";
import { parseHostpathFlags } from "../../../src/csi/hostpath/flags.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-faults-"));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Replaces the file atomically (a new inode), as a test driver does between calls. */
function write(file: string, faults: object): void {
  fs.writeFileSync(file + ".tmp", JSON.stringify(faults));
  fs.renameSync(file + ".tmp", file);
}

void describe("csi-hostpath fault injection", () => {
  void it("fails a method `times` times with the named code, then lets it through", () => {
    const file = path.join(dir, "a.json");
    write(file, { NodeStageVolume: { code: "UNAVAILABLE", times: 2 } });
    const faults = faultSource(file, nullLogger);
    for (let i = 0; i < 2; i++) {
      const f = faults.take("NodeStageVolume");
      assert.equal(f?.error?.code, status.UNAVAILABLE);
      assert.equal(f?.hangMs, 0);
    }
    assert.equal(faults.take("NodeStageVolume"), null, "used up");
    assert.equal(faults.take("NodePublishVolume"), null, "other methods untouched");
  });

  void it("a changed file resets the counts; a removed file injects nothing", () => {
    const file = path.join(dir, "b.json");
    write(file, { NodeUnstageVolume: { code: "ABORTED" } });
    const faults = faultSource(file, nullLogger);
    assert.equal(faults.take("NodeUnstageVolume")?.error?.code, status.ABORTED);
    assert.equal(faults.take("NodeUnstageVolume"), null, "times defaults to 1");
    write(file, { NodeUnstageVolume: { code: "ABORTED" } });
    assert.equal(faults.take("NodeUnstageVolume")?.error?.code, status.ABORTED, "counts reset");
    fs.rmSync(file);
    write(file + "-other", {});
    assert.equal(faults.take("NodeUnstageVolume"), null);
  });

  void it("a hang alone runs the call afterwards; a hang with a code fails it afterwards", () => {
    const file = path.join(dir, "c.json");
    write(file, {
      NodePublishVolume: { hangMs: 1500, times: 1 },
      NodeUnpublishVolume: { hangMs: 10, code: "DEADLINE_EXCEEDED" },
    });
    const faults = faultSource(file, nullLogger);
    assert.deepEqual(faults.take("NodePublishVolume"), {
      hangMs: 1500,
      answerAfterMs: 0,
      error: null,
      noop: false,
    });
    const f = faults.take("NodeUnpublishVolume");
    assert.equal(f?.hangMs, 10);
    assert.equal(f?.error?.code, status.DEADLINE_EXCEEDED);
  });

  void it("`skip` lets that many calls through first; `answerAfterMs` delays the answer of a call that ran", () => {
    const file = path.join(dir, "skip.json");
    write(file, {
      CreateVolume: { code: "RESOURCE_EXHAUSTED", skip: 1 },
      DeleteVolume: { answerAfterMs: 2000, times: 2 },
    });
    const faults = faultSource(file, nullLogger);
    assert.equal(faults.take("CreateVolume"), null, "the first call runs");
    assert.equal(faults.take("CreateVolume")?.error?.code, status.RESOURCE_EXHAUSTED, "the second fails");
    assert.equal(faults.take("CreateVolume"), null, "times defaults to 1");
    const d = faults.take("DeleteVolume");
    assert.equal(d?.answerAfterMs, 2000);
    assert.equal(d?.error, null);
    assert.throws(() => parseFaults('{"CreateVolume": {"answerAfterMs": 5, "code": "INTERNAL"}}'), /exclude/);
    assert.throws(() => parseFaults('{"CreateVolume": {"skip": -1, "code": "INTERNAL"}}'), /skip/);
  });

  void it("a noop answers success without running the call, `times` times", () => {
    const file = path.join(dir, "e.json");
    write(file, { NodePublishVolume: { noop: true, times: 2 } });
    const faults = faultSource(file, nullLogger);
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(faults.take("NodePublishVolume"), {
        hangMs: 0,
        answerAfterMs: 0,
        error: null,
        noop: true,
      });
    }
    assert.equal(faults.take("NodePublishVolume"), null, "used up: the call runs again");
  });

  void it("a file that does not parse injects nothing until it is fixed", () => {
    const file = path.join(dir, "d.json");
    fs.writeFileSync(file, "{ not json");
    const faults = faultSource(file, nullLogger);
    assert.equal(faults.take("NodeStageVolume"), null);
    write(file, { NodeStageVolume: { code: "INTERNAL" } });
    assert.equal(faults.take("NodeStageVolume")?.error?.code, status.INTERNAL);
  });

  void it("without a file nothing is ever injected", () => {
    assert.equal(faultSource(null, nullLogger).take("NodeStageVolume"), null);
  });

  void it("rejects unknown codes, OK, bad numbers and empty faults", () => {
    assert.throws(() => parseFaults('{"X":{"code":"NOPE"}}'), /unknown gRPC status/);
    assert.throws(() => parseFaults('{"X":{"code":"OK"}}'), /unknown gRPC status/);
    assert.throws(() => parseFaults('{"X":{"hangMs":-1}}'), /hangMs/);
    assert.throws(() => parseFaults('{"X":{"code":"ABORTED","times":1.5}}'), /times/);
    assert.throws(() => parseFaults('{"X":{"times":3}}'), /code, hangMs or noop/);
    assert.throws(() => parseFaults('{"X":{"noop":"yes"}}'), /noop must be a boolean/);
    assert.throws(() => parseFaults('{"X":{"noop":true,"code":"ABORTED"}}'), /exclude each other/);
    assert.throws(() => parseFaults("[]"), /JSON object/);
  });

  void it("--faults is a flag of csi-hostpath", () => {
    const base = ["--endpoint=unix:///tmp/x.sock", "--state-dir=/tmp/s", "--node-id=n1"];
    assert.equal(parseHostpathFlags([...base, "--faults=/tmp/f.json"], {}).faults, "/tmp/f.json");
    assert.equal(parseHostpathFlags(base, {}).faults, null);
  });
});
