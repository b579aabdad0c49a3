/**
 * The log frame splitter of `alloc logs -tail -f` (src/api/log_frames.ts): Nomad's frames arrive as
 * JSON objects back to back, cut anywhere by the transport; each is yielded once, whole.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { JsonObjectSplitter } from "../../../src/api/log_frames.js";

const frames = [
  { Offset: 12, Data: Buffer.from("line-1\nline-2\n").toString("base64"), File: "alloc/logs/t.stdout.0" },
  { Offset: 20, Data: Buffer.from("{not json}\n").toString("base64"), File: 'odd "name} {' },
  { Offset: 33, Data: "", File: "a\\\\b" },
];
const text = frames.map((f) => JSON.stringify(f)).join("");

test("frames cut at every byte boundary come out whole, once, in order", () => {
  const bytes = Buffer.from(text);
  for (let cut = 0; cut <= bytes.length; cut++) {
    const s = new JsonObjectSplitter();
    const got = [...s.push(bytes.subarray(0, cut)), ...s.push(bytes.subarray(cut))].map(
      (t) => JSON.parse(t) as unknown,
    );
    assert.deepEqual(got, frames, `cut at ${cut}`);
    assert.equal(s.rest(), "");
  }
});

test("a frame not finished yet stays pending", () => {
  const s = new JsonObjectSplitter();
  const first = JSON.stringify(frames[0]);
  assert.deepEqual(s.push(Buffer.from(first + first.slice(0, 10))), [first]);
  assert.equal(s.rest(), first.slice(0, 10));
});
