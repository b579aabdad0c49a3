/**
 * The read queue's order (unit: a recording handler, no sockets): writes are handled where they
 * arrive, reads one per event-loop iteration, oldest first, so a write that arrives while reads
 * are queued runs before all but at most one of them; reads whose client left are skipped.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { IncomingMessage, ServerResponse } from "node:http";
import { ReadQueue } from "../../../src/server/http/read_queue.js";

function request(method: string, name: string, gone = false): [IncomingMessage, ServerResponse] {
  const req = {
    method,
    url: name,
    destroyed: gone,
    socket: { destroyed: gone },
  } as unknown as IncomingMessage;
  const res = { destroyed: gone } as unknown as ServerResponse;
  return [req, res];
}

const nextIteration = () => new Promise<void>((resolve) => setImmediate(resolve));

test("writes go first; queued reads run one per loop iteration, oldest first", async () => {
  const handled: string[] = [];
  const q = new ReadQueue((req) => handled.push(req.url!));
  for (const name of ["r1", "r2", "r3"]) q.listener(...request("GET", name));
  q.listener(...request("PUT", "w1"));
  assert.deepEqual(handled, ["w1"], "the write is handled at once, no read yet");
  assert.equal(q.waiting, 3);

  await nextIteration();
  assert.deepEqual(handled, ["w1", "r1"], "one read per iteration");
  // A write arriving now still passes the two reads left.
  q.listener(...request("DELETE", "w2"));
  q.listener(...request("HEAD", "r4"));
  assert.deepEqual(handled, ["w1", "r1", "w2"]);

  while (q.waiting > 0) await nextIteration();
  assert.deepEqual(handled, ["w1", "r1", "w2", "r2", "r3", "r4"]);
});

test("a read whose client went away while queued is never handled", async () => {
  const handled: string[] = [];
  const q = new ReadQueue((req) => handled.push(req.url!));
  q.listener(...request("GET", "gone", true));
  q.listener(...request("GET", "here"));
  while (q.waiting > 0) await nextIteration();
  assert.deepEqual(handled, ["here"]);
});
