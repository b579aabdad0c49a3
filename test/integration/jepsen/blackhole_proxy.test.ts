/**
 * The blackholing proxy (test/helpers/blackhole_proxy.ts) against a real echo server on loopback:
 * bytes flow; while partitioned nothing crosses in either direction, no socket is closed, a close
 * is held back and a new connection is held silent; after the heal everything held arrives in
 * order; liveConnections names the open connections.
 */
import assert from "node:assert/strict";
import net from "node:net";
import { after, before, test } from "node:test";
import { eventually } from "../../helpers/agent_process.js";
import { BlackholeProxy } from "../../helpers/blackhole_proxy.js";

let echo: net.Server;
let proxy: BlackholeProxy;
/** What the echo server saw: accepted connections and closes. */
const seen = { accepted: 0, closed: 0 };

before(async () => {
  echo = net.createServer((s) => {
    seen.accepted++;
    s.on("data", (d) => s.write(d));
    s.on("error", () => undefined);
    s.on("close", () => seen.closed++);
  });
  await new Promise<void>((r) => echo.listen(0, "127.0.0.1", r));
  const port = (echo.address() as net.AddressInfo).port;
  proxy = await BlackholeProxy.start(`127.0.0.1:${port}`);
});

after(async () => {
  await proxy.close();
  await new Promise<void>((r) => echo.close(() => r()));
});

function connect(): Promise<{ sock: net.Socket; got: () => string; closed: () => boolean }> {
  return new Promise((resolve, reject) => {
    let text = "";
    let closed = false;
    const sock = net.connect(proxy.port, "127.0.0.1", () =>
      resolve({ sock, got: () => text, closed: () => closed }),
    );
    sock.on("data", (d: Buffer) => (text += d.toString()));
    sock.on("close", () => (closed = true));
    sock.once("error", reject);
  });
}

/** Waits long enough that anything forwarded would have arrived on loopback. */
const quiet = () => new Promise((r) => setTimeout(r, 300));

test("forwards, blackholes both directions without closing, and delivers in order after the heal", async () => {
  const c = await connect();
  c.sock.write("one ");
  await eventually("the echo", async () => (c.got() === "one " ? true : undefined), 5000, 10);
  assert.equal(proxy.liveConnections().length, 1);

  proxy.partition();
  c.sock.write("two ");
  c.sock.write("three ");
  await quiet();
  assert.equal(c.got(), "one ", "nothing crosses while partitioned");
  assert.equal(c.closed(), false, "the client's socket stays open");
  assert.equal(seen.closed, 0, "the upstream's socket stays open");

  const acceptedBefore = seen.accepted;
  const late = await connect();
  late.sock.write("late");
  await quiet();
  assert.equal(seen.accepted, acceptedBefore, "a connection made while partitioned is held silent");
  assert.equal(late.closed(), false);

  c.sock.end();
  await quiet();
  assert.equal(seen.closed, 0, "a close is held back while partitioned");

  proxy.heal();
  await eventually(
    "the held bytes to arrive",
    async () => (late.got() === "late" ? true : undefined),
    5000,
    10,
  );
  assert.equal(seen.accepted, acceptedBefore + 1, "the held connection is dialled at the heal");
  await eventually(
    "the held close to reach the upstream",
    async () => (seen.closed >= 1 ? true : undefined),
    5000,
    10,
  );
  assert.equal(c.got(), "one two three ", "what was held is delivered in order");
  assert.equal(proxy.liveConnections().length, 1, "only the late connection is live");
  late.sock.destroy();
  await eventually(
    "no live connection",
    async () => (proxy.liveConnections().length === 0 ? true : undefined),
    5000,
    10,
  );
});
