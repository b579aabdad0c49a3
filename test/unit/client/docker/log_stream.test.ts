/**
 * Docker's multiplexed log stream (drivers/docker/log_stream.ts), pure: frames split however the
 * chunks fall, stdout and stderr apart, timestamps stripped and read to the nanosecond, `since`
 * written as Docker reads it.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  FrameParser,
  rfc3339Ns,
  sinceParam,
  splitTimestamp,
} from "../../../../src/client/drivers/docker/log_stream.js";

function frame(stream: 1 | 2, text: string): Buffer {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

describe("docker log stream", () => {
  it("splits frames across any chunking", () => {
    const all = Buffer.concat([frame(1, "out one\n"), frame(2, "err\n"), frame(1, "out two\n")]);
    for (const size of [1, 3, 8, 9, all.length]) {
      const p = new FrameParser();
      const got: string[] = [];
      for (let i = 0; i < all.length; i += size) {
        for (const f of p.push(all.subarray(i, i + size))) got.push(`${f.stream}:${f.payload.toString()}`);
      }
      assert.deepEqual(got, ["1:out one\n", "2:err\n", "1:out two\n"], `chunks of ${size}`);
    }
  });

  it("strips the timestamp and reads it to the nanosecond", () => {
    const { ns, message } = splitTimestamp(Buffer.from("2026-11-28T17:58:20.123456789Z hello\n"));
    assert.equal(message.toString(), "hello\n");
    assert.equal(ns, BigInt(Date.parse("2026-11-28T17:58:20Z")) * 1_000_000n + 123_456_789n);
    assert.equal(rfc3339Ns("2026-11-28T17:58:20.5Z")! % 1_000_000_000n, 500_000_000n);
    assert.equal(splitTimestamp(Buffer.from("no time here\n")).ns, null);
  });

  it("since is seconds.nanoseconds", () => {
    assert.equal(sinceParam(1_700_000_000_000_000_007n), "1700000000.000000007");
  });
});
