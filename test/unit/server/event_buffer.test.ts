/**
 * The event stream's pieces without I/O: topic parsing and matching (Nomad's rules), the bounded
 * buffer's resume rule, and a stream on a fake response whose socket stops taking writes — a slow
 * reader is cut off when the buffer drops what it has not read, and nothing queues for it meanwhile.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { matches, parseTopics } from "../../../src/server/events/topics.js";
import { EventBuffer } from "../../../src/server/events/buffer.js";
import { EventStream } from "../../../src/server/events/stream.js";
import type { CommittedTxn } from "../../../src/server/state/commit_feed.js";
import { makeVolume } from "../../builders/volume.js";
import { nullLogger } from "../../../src/internal/log.js";
import { isBerthError } from "../../../src/structs/errors.js";

test("topics: Topic:Key, bare topic is Topic:*, none is *:*; unknown names and bad pairs are 400s naming topic", () => {
  assert.deepEqual([...parseTopics([])], [["*", ["*"]]]);
  assert.deepEqual(
    [...parseTopics(["Job:web", "Job", "CSIVolume:v1", "Job:web"])],
    [
      ["Job", ["web", "*"]],
      ["CSIVolume", ["v1"]],
    ],
  );
  for (const bad of ["Bogus", "Job:a:b", ":x", "Job:"]) {
    assert.throws(
      () => parseTopics([bad]),
      (e: unknown) => isBerthError(e) && e.code === "ERR_VALIDATION" && e.message.startsWith("topic: "),
      bad,
    );
  }
  const ev = { Topic: "CSIVolume", Key: "v1", Namespace: "default", FilterKeys: ["v1", "v1", "p1"] };
  const sub = (topics: string[], namespaces = ["default"]) => ({
    topics: parseTopics(topics),
    namespaces: new Set(namespaces),
  });
  assert.equal(matches(sub(["CSIVolume:v1"]), ev), true);
  assert.equal(matches(sub(["CSIVolume:p1"]), ev), true, "a FilterKey matches");
  assert.equal(matches(sub(["CSIVolume:v2"]), ev), false);
  assert.equal(matches(sub(["Job"]), ev), false);
  assert.equal(matches(sub(["*:v1"]), ev), true);
  assert.equal(matches(sub([]), ev), true);
  assert.equal(matches(sub(["CSIVolume"], ["b"]), ev), false, "another namespace");
  assert.equal(matches(sub(["Node"], ["b"]), { ...ev, Topic: "Node", Namespace: "" }), true, "no namespace");
});

const txn = (index: number): CommittedTxn => ({
  index,
  changes: [
    { table: "volumes", namespace: "default", id: `v${index}`, op: "put", record: makeVolume(`v${index}`) },
  ],
});

test("buffer: keeps the last `size` indexes; resume from an index, the next one after it, or the oldest held", () => {
  const b = new EventBuffer(3);
  for (const i of [2, 5, 7, 9]) b.append(txn(i));
  assert.equal(b.length, 3);
  const indexAt = (seq: number) => b.at(seq)?.index;
  assert.equal(indexAt(b.startSeq(0)), 5, "0: the oldest held");
  assert.equal(indexAt(b.startSeq(1)), 5, "older than the buffer: the oldest held");
  assert.equal(indexAt(b.startSeq(7)), 7, "that index");
  assert.equal(indexAt(b.startSeq(6)), 7, "else the first after it");
  assert.equal(b.startSeq(10), b.nextSeq, "past the newest: what comes next");
  const first = b.at(b.startSeq(7))!;
  assert.equal(first.events[0]!.Type, "CSIVolumeRegistered");
  assert.equal(b.at(b.startSeq(7))!.events, first.events, "converted once, shared by every reader");
});

/** A response whose socket takes `capacity` writes, then reports backpressure until drained. */
class FakeResponse extends EventEmitter {
  written: string[] = [];
  destroyed = false;
  ended = false;
  constructor(private capacity: number) {
    super();
  }
  writeHead() {
    return this;
  }
  flushHeaders() {}
  write(chunk: string) {
    this.written.push(chunk);
    return this.written.length < this.capacity;
  }
  end() {
    this.ended = true;
    this.emit("close");
  }
  destroy() {
    this.destroyed = true;
    this.emit("close");
  }
  drainAll() {
    this.capacity = Infinity;
    this.emit("drain");
  }
}

const streamOn = (res: FakeResponse, buffer: EventBuffer) =>
  new EventStream(
    res as unknown as ServerResponse,
    buffer,
    {
      topics: parseTopics([]),
      namespaces: new Set(["default"]),
      index: 0,
      expiresAtMs: 0,
      authorize: () => {},
    },
    { heartbeatMs: 60_000, writeTimeoutMs: 60_000 },
    nullLogger,
  );

test("stream: a reader whose socket stops taking writes gets nothing more queued, and is cut off once the buffer drops what it has not read", async () => {
  const buffer = new EventBuffer(4);
  const res = new FakeResponse(2);
  const s = streamOn(res, buffer);
  assert.deepEqual(res.written, ["{}\n"]);
  buffer.append(txn(1));
  s.wake();
  assert.equal(res.written.length, 2, "the frame of index 1; the socket is now full");
  for (let i = 2; i <= 4; i++) {
    buffer.append(txn(i));
    s.wake();
  }
  assert.equal(res.written.length, 2, "nothing is written while the socket is full");
  assert.equal(res.destroyed, false, "it still has everything it needs in the buffer");
  buffer.append(txn(5));
  buffer.append(txn(6));
  s.wake();
  assert.equal(res.destroyed, true, "index 2 was dropped unread: cut off");
  await s.done;
});

test("stream: a reader that drains in time gets every index once, in order", () => {
  const buffer = new EventBuffer(4);
  const res = new FakeResponse(2);
  const s = streamOn(res, buffer);
  for (let i = 1; i <= 4; i++) {
    buffer.append(txn(i));
    s.wake();
  }
  res.drainAll();
  const indexes = res.written.slice(1).map((l) => (JSON.parse(l) as { Index: number }).Index);
  assert.deepEqual(indexes, [1, 2, 3, 4]);
  assert.equal(res.destroyed, false);
  s.close();
});

test("stream: an index holding none of the reader's topics is skipped without being converted", () => {
  const buffer = new EventBuffer(4);
  let reads = 0;
  const vol = makeVolume("v1");
  const change = {
    table: "volumes" as const,
    namespace: "default",
    id: "v1",
    op: "put" as const,
    get record() {
      reads++;
      return vol;
    },
  };
  const res = new FakeResponse(100);
  const s = new EventStream(
    res as unknown as ServerResponse,
    buffer,
    {
      topics: parseTopics(["Job"]),
      namespaces: new Set(["default"]),
      index: 0,
      expiresAtMs: 0,
      authorize: () => {},
    },
    { heartbeatMs: 60_000, writeTimeoutMs: 60_000 },
    nullLogger,
  );
  buffer.append({ index: 1, changes: [change] });
  s.wake();
  assert.equal(reads, 0, "the volume record was never read");
  assert.deepEqual(res.written, ["{}\n"]);
  buffer.append(txn(2));
  const all = streamOn(new FakeResponse(100), buffer);
  assert.ok(reads > 0, "a reader of every topic converts it");
  s.close();
  all.close();
});
