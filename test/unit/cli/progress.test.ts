/**
 * CLI progress for long operations (cli/progress.ts): nothing extra for a quick one; past the grace,
 * a start line, each new state line once, a line every 10 s while nothing changes, and a closing
 * line — all on stderr, stdout untouched; the operation's answer or error passes through unchanged.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { withProgress } from "../../../src/cli/progress.js";
import { claimProgress } from "../../../src/cli/commands/volume_progress.js";
import { captureIO } from "../../fakes/command_io.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("progress: a quick operation prints nothing and is not watched", async () => {
  const o = captureIO("http://127.0.0.1:1");
  let watched = 0;
  const watch = async () => [`${++watched}`];
  // 30 ms of work, well within the grace: no line, no reading.
  const r = await withProgress(o, { what: "Deleting volume", graceMs: 1000, watch }, async () => {
    await sleep(30);
    return 42;
  });
  assert.equal(r, 42);
  assert.deepEqual([o.out, o.err, watched], [[], [], 0]);
});

test("progress: a long operation shows its changing state on stderr and ends with a summary", async () => {
  const o = captureIO("http://127.0.0.1:1");
  o.now = () => Date.now();
  const states = [
    ["claim of alloc a1: taken; node-unpublish (attempt 1): busy"],
    ["claim of alloc a1: node-detached"],
  ];
  let reads = 0;
  const watch = async () => states[Math.min(reads++, states.length - 1)]!;
  const r = await withProgress(
    o,
    { what: 'Detaching volume "demo"', graceMs: 30, pollMs: 20, watch },
    async () => {
      while (reads < 4) await sleep(10);
      return "ok";
    },
  );
  assert.equal(r, "ok");
  assert.deepEqual(o.out, []);
  const lines = o.err.map((l) => l.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/, "T"));
  assert.deepEqual(lines, [
    '==> T: Detaching volume "demo": still in progress',
    "    T: claim of alloc a1: taken; node-unpublish (attempt 1): busy",
    "    T: claim of alloc a1: node-detached",
    '==> T: Detaching volume "demo": 0s in all',
  ]);
});

test("progress: the operation's error passes through; a failing watch prints nothing", async () => {
  const o = captureIO("http://127.0.0.1:1");
  const failing = async (): Promise<string[]> => {
    throw new Error("server away");
  };
  await assert.rejects(
    withProgress(o, { what: "Creating volume", graceMs: 10, pollMs: 10, watch: failing }, async () => {
      await sleep(60);
      throw new Error("409 conflict");
    }),
    /409 conflict/,
  );
  assert.equal(o.err[0]!.endsWith("Creating volume: still in progress"), true);
  assert.equal(o.err.length, 2, o.err.join("\n"));
});

test("progress: detach shows each claim of the node with its state and failing step", async () => {
  const o = captureIO("http://127.0.0.1:1");
  const claim = (id: string, node: string, State: string, ReleaseStatus?: object) => ({
    AllocationID: id,
    NodeID: node,
    State,
    ...(ReleaseStatus ? { ReleaseStatus } : {}),
  });
  let vol: object = {
    ReadClaims: {},
    WriteClaims: { a2: claim("a2aaaaaaaa", "n1", "taken") },
    PastClaims: {
      a1: claim("a1aaaaaaaa", "n1", "taken", {
        Step: "node-unpublish",
        Attempts: 3,
        LastError: "device busy",
      }),
      b1: claim("b1bbbbbbbb", "n2", "node-detached"),
    },
  };
  o.api = { volumes: { info: async () => vol } } as unknown as typeof o.api;
  const watch = claimProgress(o, "demo", "n1");
  assert.deepEqual(await watch(), [
    "claim of alloc a1aaaaaa: taken; node-unpublish (attempt 3): device busy",
    "claim of alloc a2aaaaaa: taken",
  ]);
  vol = { ReadClaims: {}, WriteClaims: {}, PastClaims: {} };
  assert.deepEqual(await watch(), ["no claim left on the node"]);
});
