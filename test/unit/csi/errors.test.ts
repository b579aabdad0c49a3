import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { status } from "@grpc/grpc-js";
import { BerthError, isRetryable } from "../../../src/structs/errors.js";
import { codeForStatus, csiError, isMaybeApplied, redactSecretValues } from "../../../src/csi/errors.js";
import { isTransientCsiError, retryCsiCall } from "../../../src/client/csimanager/csi_retry.js";
import { nullLogger } from "../../../src/internal/log.js";

function grpcError(code: status, details: string): Error {
  return Object.assign(new Error(`${code} ${status[code]}: ${details}`), { code, details, metadata: {} });
}

const EXPECTED: [status, string][] = [
  [status.CANCELLED, "ERR_ABORTED"],
  [status.UNKNOWN, "ERR_CSI_UNKNOWN"],
  [status.INVALID_ARGUMENT, "ERR_CSI_INVALID_ARGUMENT"],
  [status.DEADLINE_EXCEEDED, "ERR_CSI_DEADLINE_EXCEEDED"],
  [status.NOT_FOUND, "ERR_CSI_NOT_FOUND"],
  [status.ALREADY_EXISTS, "ERR_CSI_ALREADY_EXISTS"],
  [status.PERMISSION_DENIED, "ERR_PERMISSION_DENIED"],
  [status.RESOURCE_EXHAUSTED, "ERR_CSI_RESOURCE_EXHAUSTED"],
  [status.FAILED_PRECONDITION, "ERR_CSI_FAILED_PRECONDITION"],
  [status.ABORTED, "ERR_CSI_ABORTED"],
  [status.OUT_OF_RANGE, "ERR_CSI_OUT_OF_RANGE"],
  [status.UNIMPLEMENTED, "ERR_CSI_UNIMPLEMENTED"],
  [status.INTERNAL, "ERR_CSI_INTERNAL"],
  [status.UNAVAILABLE, "ERR_CSI_UNAVAILABLE"],
  [status.DATA_LOSS, "ERR_CSI_INTERNAL"],
  [status.UNAUTHENTICATED, "ERR_PERMISSION_DENIED"],
];

void describe("csi error mapping", () => {
  void it("maps every non-OK gRPC status to a stable code", () => {
    for (const [s, code] of EXPECTED) assert.equal(codeForStatus(s), code, status[s]);
    assert.equal(codeForStatus(99), "ERR_CSI_UNKNOWN");
  });

  void it("classifies retries as the design says", () => {
    const retried = [
      "ABORTED",
      "UNAVAILABLE",
      "DEADLINE_EXCEEDED",
      "RESOURCE_EXHAUSTED",
      "FAILED_PRECONDITION",
    ];
    for (const [s] of EXPECTED) {
      const err = csiError("NodeStageVolume", grpcError(s, "x"));
      assert.equal(isTransientCsiError(err), retried.includes(status[s]), status[s]);
      assert.equal(isRetryable(err.code), retried.includes(status[s]), status[s]);
    }
  });

  void it("names the method and carries the plugin message, with secret values cut out", () => {
    const err = csiError("NodeStageVolume", grpcError(status.INTERNAL, "mount failed: password=hunter22"), [
      "hunter22",
    ]);
    assert.equal(err.code, "ERR_CSI_INTERNAL");
    assert.match(err.message, /NodeStageVolume/);
    assert.match(err.message, /mount failed/);
    assert.doesNotMatch(err.message, /hunter22/);
    assert.equal(err.cause, undefined);
  });

  void it("redacts only values long enough to be secrets", () => {
    assert.equal(redactSecretValues("a ab abc", ["a", "ab", "abc"]), "a ab [REDACTED]");
  });

  void it("treats timeouts and cancellations as maybe applied", () => {
    assert.equal(
      isMaybeApplied(csiError("ControllerPublishVolume", grpcError(status.DEADLINE_EXCEEDED, ""))),
      true,
    );
    assert.equal(isMaybeApplied(new BerthError("ERR_RPC_TIMEOUT", "t")), true);
    assert.equal(isMaybeApplied(new BerthError("ERR_ABORTED", "t")), true);
    const abort = Object.assign(new Error("aborted"), { name: "AbortError" });
    assert.equal(isMaybeApplied(abort), true);
    assert.equal(
      isMaybeApplied(csiError("ControllerPublishVolume", grpcError(status.INVALID_ARGUMENT, ""))),
      false,
    );
    assert.equal(isMaybeApplied(new Error("x")), false);
  });
});

// The CSI retry helper in use is the client's retryCsiCall (src/client/csimanager/csi_retry.ts);
// its unused twin withCsiRetry (src/csi/errors.ts) is gone and these tests run against it.
void describe("retryCsiCall", () => {
  void it("retries retryable codes until success", async () => {
    let n = 0;
    const retries: string[] = [];
    const out = await retryCsiCall(
      "NodeStageVolume",
      async () => {
        n++;
        if (n < 3) throw csiError("NodeStageVolume", grpcError(status.UNAVAILABLE, "busy"));
        return "ok";
      },
      { deadlineMs: 5_000, baseMs: 1, maxMs: 2, jitter: 0 },
      nullLogger,
      undefined,
      (e) => retries.push((e as BerthError).code),
    );
    assert.equal(out, "ok");
    assert.equal(n, 3);
    assert.deepEqual(retries, ["ERR_CSI_UNAVAILABLE", "ERR_CSI_UNAVAILABLE"]);
  });

  void it("never retries UNIMPLEMENTED or INVALID_ARGUMENT", async () => {
    for (const s of [status.UNIMPLEMENTED, status.INVALID_ARGUMENT]) {
      let n = 0;
      await assert.rejects(
        retryCsiCall(
          "NodeStageVolume",
          async () => {
            n++;
            throw csiError("NodeStageVolume", grpcError(s, "no"));
          },
          { deadlineMs: 5_000, baseMs: 1, maxMs: 2 },
          nullLogger,
        ),
        (e: BerthError) => e.code === codeForStatus(s),
      );
      assert.equal(n, 1);
    }
  });

  void it("stops when the signal aborts", async () => {
    const ac = new AbortController();
    const p = retryCsiCall(
      "NodeStageVolume",
      async () => {
        throw csiError("NodeStageVolume", grpcError(status.ABORTED, "again"));
      },
      { deadlineMs: Infinity, baseMs: 50, maxMs: 50 },
      nullLogger,
      ac.signal,
    );
    setTimeout(() => ac.abort(), 20);
    await assert.rejects(p, (e: Error) => e.name === "AbortError");
  });
});
