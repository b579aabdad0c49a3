/**
 * The listener's order is data (server/listener.ts): gates see a connection in the order listed,
 * however each attaches (prependListener), and a request goes to the first taker that takes it.
 */
import assert from "node:assert/strict";
import type http from "node:http";
import { test } from "node:test";
import { nullLogger } from "../../../src/internal/log.js";
import { buildListener, listen, type ListenerGate } from "../../../src/server/listener.js";

test("gates run in list order; the first taker that takes a request answers it", async (t) => {
  const seen: string[] = [];
  const gate =
    (name: string): ListenerGate =>
    (s: http.Server) =>
      s.prependListener("connection", () => seen.push(`gate ${name}`));
  const server = buildListener({
    tls: undefined,
    options: {},
    gates: [gate("a"), gate("b"), gate("c")],
    upgrades: () => undefined,
    takers: [
      (req) => {
        seen.push("peer taker");
        return req.url === "/peer" ? (req.socket.end(), true) : false;
      },
      (_req, res) => {
        seen.push("api taker");
        res.end("api");
        return true;
      },
    ],
    log: nullLogger,
  });
  const where = await listen(server, { host: "127.0.0.1", port: 0 }, undefined);
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const res = await fetch(`${where.url}/v1/x`);
  assert.equal(await res.text(), "api");
  assert.deepEqual(seen, ["gate a", "gate b", "gate c", "peer taker", "api taker"]);
  assert.match(where.bound, /^127\.0\.0\.1:\d+$/);
});
