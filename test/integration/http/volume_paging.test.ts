/**
 * Paging the CSI volume list over real HTTP (an in-process server on loopback, a real SQLite
 * file, a node agent's RPC connection reporting the plugin): walking `per_page` pages across
 * namespaces with `next_token` visits every volume exactly once while volumes are registered and
 * deregistered between pages — those added ahead of the walk are met, those behind it are not,
 * those deleted ahead are not — and the pages put together equal the unpaged list of the end.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { nullLogger } from "../../../src/internal/log.js";
import { Server } from "../../../src/server/server.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent, http } from "../server/fake_agent.js";

const spec = (id: string, ns: string) => ({
  ID: id,
  Namespace: ns,
  PluginID: "p1",
  ExternalID: `ext-${id}`,
  RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
});

type Stub = { ID: string; Namespace: string };
const token = (v: Stub) => `${v.Namespace}.${v.ID}`;

test("per_page walks every volume exactly once across namespaces while writes happen between pages", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "berth-paging-"));
  const server = new Server({
    dataDir: dir,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 60_000,
  });
  await server.start();
  const peer = await connectAgent(server.httpAddress);
  t.after(async () => {
    peer.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const base = server.httpAddress;
  await peer.call("Node.Register", {
    Node: makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1") } }),
  });
  const namespaces = ["a", "a-b", "b", "default"];
  for (const ns of namespaces.filter((n) => n !== "default")) {
    assert.equal((await http(base, "PUT", `/v1/namespace/${ns}`, { Name: ns })).status, 200);
  }
  const register = async (ns: string, ids: string[]) => {
    const res = await http(base, "PUT", `/v1/volumes?namespace=${ns}`, {
      Volumes: ids.map((id) => spec(id, ns)),
    });
    assert.equal(res.status, 200, res.text);
  };
  for (const ns of namespaces) {
    await register(
      ns,
      Array.from({ length: 12 }, (_, i) => `v${String(i).padStart(2, "0")}`),
    );
  }
  const initial = new Set(
    ((await http(base, "GET", "/v1/volumes?type=csi&namespace=*")).json as Stub[]).map(token),
  );
  assert.equal(initial.size, 48);

  const seen: string[] = [];
  const deleted = new Set<string>();
  const addedAhead = new Set<string>();
  const addedBehind = new Set<string>();
  let next = "";
  for (let page = 0; ; page++) {
    const res = await fetch(
      `${base}/v1/volumes?type=csi&namespace=*&per_page=5${next ? `&next_token=${next}` : ""}`,
    );
    assert.equal(res.status, 200);
    const items = (await res.json()) as Stub[];
    seen.push(...items.map(token));
    next = res.headers.get("x-nomad-nexttoken") ?? "";
    if (next === "") break;
    assert.equal(items.length, 5, "a page before the last is full");
    // Between pages: a volume ahead of the walk and one behind it, in a namespace the walk is in or
    // has left, and a volume not yet seen deregistered.
    const [nsNext, idNext] = [next.slice(0, next.indexOf(".")), next.slice(next.indexOf(".") + 1)];
    const ahead = `${idNext}-n${page}`;
    await register(nsNext, [ahead]);
    addedAhead.add(`${nsNext}.${ahead}`);
    const behindNs = namespaces.find((n) => `${n}.` < next && !next.startsWith(`${n}.`)) ?? nsNext;
    const behind = `a${page}`;
    if (`${behindNs}.${behind}` < next) {
      await register(behindNs, [behind]);
      addedBehind.add(`${behindNs}.${behind}`);
    }
    const victim = [...initial].find((tk) => tk > next && !deleted.has(tk) && page % 2 === 0);
    if (victim) {
      const [ns, id] = [victim.slice(0, victim.indexOf(".")), victim.slice(victim.indexOf(".") + 1)];
      assert.equal((await http(base, "DELETE", `/v1/volume/csi/${id}?namespace=${ns}`)).status, 200);
      deleted.add(victim);
    }
    assert.ok(page < 100, "the walk ends");
  }

  assert.ok(deleted.size > 0 && addedAhead.size > 0 && addedBehind.size > 0, "writes happened between pages");
  assert.deepEqual(seen, [...seen].sort(), "tokens only grow along the walk");
  assert.equal(new Set(seen).size, seen.length, "no volume is met twice");
  for (const tk of initial) {
    assert.equal(
      seen.includes(tk),
      !deleted.has(tk),
      `${tk}: met once unless deregistered ahead of the walk`,
    );
  }
  for (const tk of addedAhead) assert.ok(seen.includes(tk), `${tk} (added ahead of the walk) is met`);
  for (const tk of addedBehind) assert.ok(!seen.includes(tk), `${tk} (added behind the walk) is not`);

  // With no more writes, the pages put together are the unpaged list, byte for byte.
  const whole = await http(base, "GET", "/v1/volumes?type=csi&namespace=*");
  const pages: unknown[] = [];
  next = "";
  do {
    const res = await fetch(
      `${base}/v1/volumes?type=csi&namespace=*&per_page=7${next ? `&next_token=${next}` : ""}`,
    );
    pages.push(...((await res.json()) as unknown[]));
    next = res.headers.get("x-nomad-nexttoken") ?? "";
  } while (next !== "");
  assert.equal(JSON.stringify(pages), whole.text.trim());
});
