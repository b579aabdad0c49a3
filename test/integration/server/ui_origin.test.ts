/**
 * The web UI's own writes through the browser perimeter (origin.ts + ui_origin.ts) on an in-process
 * server over real loopback HTTP: a write whose Origin is the agent's own origin, reached at an IP
 * address or `localhost`, goes through (the UI's "Stop job", "Detach"); the same request at a DNS
 * name — what a DNS-rebinding page sends — is refused and changes nothing, as is any other origin
 * and a same-origin write without a JSON Content-Type.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import { Server } from "../../../src/server/server.js";
import { nullLogger } from "../../../src/internal/log.js";
import { isUiSameOrigin } from "../../../src/server/http/ui_origin.js";

async function start(t: { after(fn: () => unknown): void }): Promise<{ base: string; port: number }> {
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 60_000,
  });
  await server.start();
  t.after(() => server.stop());
  const base = server.httpAddress;
  return { base, port: Number(new URL(base).port) };
}

/** A raw request through node:http, so the test sets Host and Origin as a browser would. */
function put(
  base: string,
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(base + path, { method: "PUT", headers, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function namespaces(base: string): Promise<string[]> {
  const list = (await (await fetch(`${base}/v1/namespaces`)).json()) as { Name: string }[];
  return list.map((n) => n.Name).sort();
}

test("the UI's same-origin writes pass at an address, never at a name DNS could rebind", async (t) => {
  const { base, port } = await start(t);
  const json = { "Content-Type": "application/json" };
  const write = (name: string, headers: Record<string, string>) =>
    put(base, `/v1/namespace/${name}`, { ...json, ...headers }, JSON.stringify({ Name: name }));

  for (const [name, host] of [
    ["by-ip", `127.0.0.1:${port}`],
    ["by-localhost", `localhost:${port}`],
    ["by-ipv6", `[::1]:${port}`],
  ] as const) {
    const res = await write(name, { Host: host, Origin: `http://${host}` });
    assert.equal(res.status, 200, `${host}: ${res.text}`);
  }

  const refused: [string, Record<string, string>, RegExp][] = [
    // DNS rebinding: a page at evil.example:PORT whose name now resolves to this agent.
    [
      "rebound",
      { Host: `evil.example:${port}`, Origin: `http://evil.example:${port}` },
      /Origin "http:\/\/evil\.example/,
    ],
    ["other-port", { Host: `127.0.0.1:${port}`, Origin: "http://127.0.0.1:1" }, /may not send PUT/],
    ["other-scheme", { Host: `127.0.0.1:${port}`, Origin: `https://127.0.0.1:${port}` }, /may not send PUT/],
    ["with-path", { Host: `127.0.0.1:${port}`, Origin: `http://127.0.0.1:${port}/ui` }, /may not send PUT/],
  ];
  for (const [name, headers, text] of refused) {
    const res = await write(name, headers);
    assert.equal(res.status, 403, `${name}: ${res.text}`);
    assert.match(res.text, text, name);
  }
  // Same origin, but a type a cross-site form could send without a preflight.
  const plain = await put(
    base,
    "/v1/namespace/plain",
    { Host: `127.0.0.1:${port}`, Origin: `http://127.0.0.1:${port}`, "Content-Type": "text/plain" },
    JSON.stringify({ Name: "plain" }),
  );
  assert.equal(plain.status, 403);
  assert.match(plain.text, /send Content-Type: application\/json/);

  assert.deepEqual(
    await namespaces(base),
    ["by-ip", "by-ipv6", "by-localhost", "default"],
    "only the allowed writes changed anything",
  );
});

test("isUiSameOrigin compares scheme, host and port exactly", () => {
  const req = (host: string | undefined, encrypted = false) =>
    ({ headers: host === undefined ? {} : { host }, socket: { encrypted } }) as unknown as Parameters<
      typeof isUiSameOrigin
    >[0];
  assert.equal(isUiSameOrigin(req("127.0.0.1:4646"), "http://127.0.0.1:4646"), true);
  assert.equal(isUiSameOrigin(req("127.0.0.1:4646", true), "https://127.0.0.1:4646"), true);
  assert.equal(isUiSameOrigin(req("127.0.0.1:4646", true), "http://127.0.0.1:4646"), false);
  assert.equal(isUiSameOrigin(req("LOCALHOST:4646"), "http://localhost:4646"), true);
  assert.equal(isUiSameOrigin(req("10.1.2.3"), "http://10.1.2.3"), true);
  assert.equal(
    isUiSameOrigin(req("10.1.2.3:80"), "http://10.1.2.3"),
    true,
    "the default port is the same origin",
  );
  assert.equal(
    isUiSameOrigin(req("berth.example:4646"), "http://berth.example:4646"),
    false,
    "a name can be rebound",
  );
  assert.equal(
    isUiSameOrigin(req("localhost.evil.example:4646"), "http://localhost.evil.example:4646"),
    false,
  );
  assert.equal(isUiSameOrigin(req(undefined), "http://127.0.0.1:4646"), false);
  assert.equal(isUiSameOrigin(req("127.0.0.1:4646"), "null"), false);
  assert.equal(
    isUiSameOrigin(req("127.0.0.1:4646"), "http://127.0.0.1:4646/"),
    false,
    "an Origin has no path",
  );
});
