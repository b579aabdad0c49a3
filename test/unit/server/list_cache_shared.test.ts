/**
 * Shared list answers built off the hot path (http/list_cache.ts, issue 30): every request for one
 * key at one index — those that arrive while the answer is still being built included — gets the
 * bytes of one build (one read, one encode, one gzip); a big list is encoded in slices with turns
 * of the event loop between them; the sliced encoding is byte for byte JSON.stringify's. Real HTTP
 * on loopback; the store is only the cache's owner here, so any object stands in for it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { ENCODE_SLICE, encodeJsonSliced, sendCachedPage } from "../../../src/server/http/list_cache.js";
import type { StateStore } from "../../../src/server/state/store.js";

const items = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ ID: `vol-${i}`, N: i, Tags: [i % 3, null] }));

test("list cache: the sliced encoding is JSON.stringify's bytes", async () => {
  for (const n of [0, 1, ENCODE_SLICE, ENCODE_SLICE + 1, 3 * ENCODE_SLICE + 7]) {
    const list = items(n);
    assert.equal((await encodeJsonSliced(list)).toString(), JSON.stringify(list), `${n} items`);
  }
  assert.equal((await encodeJsonSliced(null)).toString(), "null");
  assert.equal((await encodeJsonSliced({ a: 1 })).toString(), '{"a":1}');
});

test("list cache: a big list is encoded across turns of the event loop", async () => {
  let turns = 0;
  let on = true;
  const tick = () => {
    if (!on) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  await encodeJsonSliced(items(10 * ENCODE_SLICE));
  on = false;
  assert.ok(turns >= 5, `the loop turned ${turns} times while 10 slices were encoded`);
});

test("list cache: concurrent requests at one index share one read, one encoding and one gzip", async (t) => {
  const store = {} as StateStore;
  let reads = 0;
  let index = 7;
  const big = items(4 * ENCODE_SLICE);
  const server = http.createServer((req, res) => {
    sendCachedPage(res, store, "volumes|test", index, () => {
      reads++;
      return { items: big, nextToken: "" };
    }).catch((err: unknown) => {
      res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;
  const get = (gzip: boolean) =>
    new Promise<Buffer>((resolve, reject) => {
      http
        .get(
          { port, host: "127.0.0.1", agent: false, headers: gzip ? { "Accept-Encoding": "gzip" } : {} },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () => {
              const body = Buffer.concat(chunks);
              resolve(res.headers["content-encoding"] === "gzip" ? gunzipSync(body) : body);
            });
          },
        )
        .on("error", reject);
    });
  const bodies = await Promise.all(Array.from({ length: 20 }, (_, i) => get(i % 2 === 0)));
  assert.equal(reads, 1, "one read for twenty callers at one index");
  for (const b of bodies) assert.equal(b.toString(), JSON.stringify(big));
  index = 8;
  await get(true);
  assert.equal(reads, 2, "a new index builds again");
});
