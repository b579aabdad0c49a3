/** RpcPeer over a real WebSocket on loopback: both directions, coded errors, cancel, close, timeout. */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { WebSocket, WebSocketServer } from "ws";
import { nullLogger } from "../../../src/internal/log.js";
import { RpcPeer } from "../../../src/internal/rpc/peer.js";
import { BerthError } from "../../../src/structs/errors.js";

interface A {
  "A.Echo": [{ text: string }, { text: string }];
  "A.Fail": [Record<string, never>, Record<string, never>];
  "A.Hang": [Record<string, never>, Record<string, never>];
}
interface B {
  "B.Add": [{ a: number; b: number }, { sum: number }];
}

let server: http.Server;
let wss: WebSocketServer;
let serverPeer: Promise<RpcPeer<A, B>>;
let clientPeer: RpcPeer<B, A>;
let hangAborted: Promise<unknown>;

before(async () => {
  server = http.createServer();
  wss = new WebSocketServer({ server });
  let resolveAbort: (v: unknown) => void = () => undefined;
  hangAborted = new Promise((r) => (resolveAbort = r));
  serverPeer = new Promise((resolve) => {
    wss.on("connection", (socket) => {
      const peer = new RpcPeer<A, B>(socket, nullLogger);
      peer.handle("A.Echo", async (req) => ({ text: req.text }));
      peer.handle("A.Fail", async () => {
        throw new BerthError("ERR_CSI_MAX_CLAIMS", "volume has exhausted its available writer claims");
      });
      peer.handle(
        "A.Hang",
        (_req, signal) =>
          new Promise((_, reject) => {
            signal.addEventListener("abort", () => {
              resolveAbort(signal.reason);
              reject(new Error("aborted"));
            });
          }),
      );
      resolve(peer);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  const socket = new WebSocket(`ws://127.0.0.1:${port}`);
  clientPeer = new RpcPeer<B, A>(socket, nullLogger);
  clientPeer.handle("B.Add", async ({ a, b }) => ({ sum: a + b }));
  await new Promise((r) => socket.once("open", r));
});

after(async () => {
  clientPeer.close();
  wss.close();
  await new Promise((r) => server.close(r));
});

test("calls go both ways over one socket", async () => {
  assert.deepEqual(await clientPeer.call("A.Echo", { text: "hi" }), { text: "hi" });
  const sp = await serverPeer;
  assert.deepEqual(await sp.call("B.Add", { a: 2, b: 3 }), { sum: 5 });
});

test("errors cross as coded BerthErrors", async () => {
  await assert.rejects(clientPeer.call("A.Fail", {}), (err: unknown) => {
    assert.ok(err instanceof BerthError);
    assert.equal(err.code, "ERR_CSI_MAX_CLAIMS");
    assert.match(err.message, /writer claims/);
    return true;
  });
});

test("a cancelled call aborts the remote handler; a timed-out call fails with ERR_RPC_TIMEOUT", async () => {
  const ac = new AbortController();
  const call = clientPeer.call("A.Hang", {}, { signal: ac.signal });
  setTimeout(() => ac.abort(), 20);
  await assert.rejects(call, (err: unknown) => err instanceof BerthError && err.code === "ERR_ABORTED");
  assert.ok(await hangAborted, "the remote handler saw the cancel");
  await assert.rejects(
    clientPeer.call("A.Hang", {}, { timeoutMs: 30 }),
    (err: unknown) => err instanceof BerthError && err.code === "ERR_RPC_TIMEOUT",
  );
});

test("unknown methods are refused; a closed connection fails pending and new calls", async () => {
  const sp = await serverPeer;
  await assert.rejects(
    sp.call("B.Add" as never, {} as never).then(() => clientPeer.call("A.Nope" as never, {} as never)),
    (err: unknown) => err instanceof BerthError && err.code === "ERR_NOT_FOUND",
  );
  const pending = clientPeer.call("A.Hang", {});
  clientPeer.close();
  await assert.rejects(
    pending,
    (err: unknown) => err instanceof BerthError && err.code === "ERR_RPC_UNAVAILABLE",
  );
  await assert.rejects(
    clientPeer.call("A.Echo", { text: "x" }),
    (err: unknown) => err instanceof BerthError && err.code === "ERR_RPC_UNAVAILABLE",
  );
});
