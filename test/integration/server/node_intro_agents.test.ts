/**
 * Node introduction end to end (issue 30 item 5): under `enforcement = "strict"` a real node agent
 * given a token made with the real CLI (`berth node intro create`) joins, and one without a token
 * is refused and says so in its log; nothing of it is stored. Real parts: a server on loopback
 * with a SQLite state file, two `berth agent -client` processes, the CLI process.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { nullLogger } from "../../../src/internal/log.js";
import { Server } from "../../../src/server/server.js";
import { AgentProcess, eventually, runCli } from "../../helpers/agent_process.js";
import { tempDir } from "../../helpers/temp_dir.js";
import { getJson } from "./fake_agent.js";

test("strict: the agent with a token from `node intro create` joins, the one without is refused", async (t) => {
  const dir = tempDir("berth-i30-intro-");
  const server = new Server({
    dataDir: path.join(dir, "server"),
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    intro: { enforcement: "strict" },
  });
  await server.start();
  t.after(() => server.stop());
  const base = server.httpAddress;
  const created = await runCli(["node", "intro", "create", "-node-name", "a", "-ttl", "10m"], {
    BERTH_ADDR: base,
  });
  assert.equal(created.code, 0, created.stderr);
  const jwt = created.stdout.trim().split("\n").pop()!;
  assert.match(created.stdout, /Successfully generated client introduction token/);
  assert.ok(fs.statSync(path.join(dir, "server", "intro-signing.key")).mode % 0o1000 === 0o600);

  const agent = (name: string, extra: string[]) => {
    const a = new AgentProcess(
      [
        "-client",
        "-data-dir",
        path.join(dir, name),
        `-servers=${new URL(base).host}`,
        `-node-name=${name}`,
        ...extra,
      ],
      path.join(dir, `${name}.log`),
    );
    t.after(() => a.stop(30_000));
    return a;
  };
  agent("a", [`-client-intro-token=${jwt}`]);
  agent("b", []);
  const nodes = () => getJson<{ Name: string; Status: string }[]>(base, "/v1/nodes");
  await eventually("node a to be ready", async () =>
    (await nodes()).some((n) => n.Name === "a" && n.Status === "ready") ? true : undefined,
  );
  await eventually("agent b to be refused", async () =>
    fs.readFileSync(path.join(dir, "b.log"), "utf8").includes("node introduction refused") ? true : undefined,
  );
  assert.deepEqual(
    (await nodes()).map((n) => n.Name),
    ["a"],
  );
  assert.ok(
    !fs.readFileSync(path.join(dir, "a.log"), "utf8").includes(jwt.split(".")[2]!),
    "the token is not logged",
  );
});
