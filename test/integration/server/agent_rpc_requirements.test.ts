/**
 * The agent RPC (`/v1/agent/rpc`) names what each method requires of the calling node
 * (src/server/rpc/agent_requirements.ts, typed over every protocol method), and the README's
 * "Node identity" table is exactly that list. Over a real WebSocket to an in-process server, every
 * listed method is served and refuses a connection that has not proved its node; a method not in
 * the protocol is unknown.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AGENT_RPC_REQUIREMENTS } from "../../../src/server/rpc/agent_requirements.js";
import { isBerthError } from "../../../src/structs/errors.js";
import type { ServerMethods } from "../../../src/structs/rpc.js";
import { connectAgent, startServer } from "./fake_agent.js";

const README = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../README.md");

function readmeRows(): string[][] {
  const text = readFileSync(README, "utf8");
  const start = text.indexOf("<!-- agent-rpc:start -->");
  const end = text.indexOf("<!-- agent-rpc:end -->");
  assert.ok(start > 0 && end > start, "the README has the agent-rpc markers");
  return text
    .slice(start, end)
    .split("\n")
    .filter((l) => l.startsWith("|"))
    .map((l) =>
      l
        .slice(1, -1)
        .split("|")
        .map((c) => c.trim()),
    )
    .filter((c) => c[0] !== "Method" && !/^-+$/.test(c[0] ?? ""));
}

test("the README's agent RPC table is the server's", () => {
  const expected = Object.entries(AGENT_RPC_REQUIREMENTS).map(([m, needs]) => [`\`${m}\``, needs]);
  for (const [, needs] of expected) assert.notEqual(needs!.trim(), "");
  assert.deepEqual(readmeRows(), expected);
});

test("every listed agent RPC method is served, and refuses a connection that has not registered", async (t) => {
  const base = await startServer(t);
  const rogue = await connectAgent(base);
  t.after(() => rogue.close());
  const codeOf = async (method: string, params: unknown) => {
    try {
      await rogue.call(method as keyof ServerMethods, params as never, { timeoutMs: 5_000 });
      return "answered";
    } catch (err) {
      assert.ok(isBerthError(err), String(err));
      return `${err.code}: ${err.message}`;
    }
  };
  const methods = Object.keys(AGENT_RPC_REQUIREMENTS).filter((m) => m !== "Node.Register");
  for (const method of methods) {
    const got = await codeOf(method, { NodeID: "n1", AllocID: "a1", VolumeID: "v1", Namespace: "default" });
    assert.match(got, /^ERR_PERMISSION_DENIED: .*has not registered/, `${method}: ${got}`);
  }
  assert.match(await codeOf("Node.Bogus", {}), /^ERR_NOT_FOUND: unknown rpc method/);
  // Last: a refused registration closes the connection.
  assert.match(
    await codeOf("Node.Register", { Node: { ID: "n1", SecretID: "" } }),
    /^ERR_(PERMISSION_DENIED|VALIDATION)/,
  );
});
