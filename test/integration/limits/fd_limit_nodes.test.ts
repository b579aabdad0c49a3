/**
 * Issue 30's open-file acceptance: a real `berth agent -server` (SQLite store on disk) started
 * with an open-file limit of 1,024 (soft and hard, by `prlimit`; FDL_LIMIT) and 1,500 simulated
 * nodes (FDL_NODES), more than it can take: `NodeSim`, real node agent code over real WebSockets,
 * each node from its own loopback address. About 15 s.
 * The server says at start, in its log, how many connections the limit allows and why; it serves
 * that many and refuses the rest with a clear answer, always keeping connections for API clients;
 * and its store keeps working for the nodes it serves — no "unable to open database file", a job
 * registers, every registered node is listed.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { openFileLimit } from "../../../src/internal/fd_limit.js";
import { nullLogger } from "../../../src/internal/log.js";
import { NodeSim } from "../../../src/nodesim/nodesim.js";
import { AgentProcess, eventually, freePort, getJson, logTail } from "../../helpers/agent_process.js";

const LIMIT = Number(process.env.FDL_LIMIT ?? 1024);
const NODES = Number(process.env.FDL_NODES ?? 1500);

test(`open-file limit ${LIMIT}: ${NODES} simulated nodes; the log says the cap, the store keeps working`, async (t) => {
  // The simulator holds a socket and files per node in this process: it needs its own room.
  const own = openFileLimit();
  if (own && own.soft < NODES * 4) return t.skip(`this process may open only ${own.soft} files`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-fdlimit-"));
  const logFile = path.join(dir, "server.log");
  const port = await freePort();
  const addr = `http://127.0.0.1:${port}`;
  const server = new AgentProcess(
    ["-server", "-data-dir", path.join(dir, "server"), "-http-addr", `127.0.0.1:${port}`],
    logFile,
    {},
    { nofile: LIMIT },
  );
  const sim = new NodeSim({
    count: NODES,
    servers: [addr],
    pluginId: null,
    csi: { nodeLatencyMs: 0, controllerLatencyMs: 0, errorRate: 0, maxVolumesPerNode: 0 },
    namePrefix: "fd",
    dataDir: null,
    // A refused node is not waited for long: the run is about what the server does, not the sim.
    registerWaitMs: 1_500,
    startConcurrency: 128,
    log: nullLogger,
  });
  let passed = false;
  try {
    const said = await eventually("the server's word on its open-file limit", async () => {
      const m = new RegExp(
        `open-file limit ${LIMIT}: this server takes at most (\\d+) connections, of which at most (\\d+) node agents`,
      ).exec(fs.readFileSync(logFile, "utf8"));
      return m ? { conns: Number(m[1]), agents: Number(m[2]) } : undefined;
    });
    assert.ok(said.conns < LIMIT && said.agents < said.conns, JSON.stringify(said));
    await sim.start();
    const registered = sim.counts().registered;
    t.diagnostic(`cap ${JSON.stringify(said)}: ${registered} of ${NODES} nodes registered`);
    assert.ok(
      registered > 0 && registered <= said.agents,
      `${registered} registered, ${JSON.stringify(said)}`,
    );
    // The store works for the nodes served: it lists them and takes a write.
    const nodes = await getJson<{ ID: string }[]>(addr, "/v1/nodes");
    assert.ok(nodes.length >= registered, `${nodes.length} nodes listed, ${registered} registered`);
    const res = await fetch(`${addr}/v1/jobs`, {
      method: "PUT",
      body: JSON.stringify({
        Job: {
          ID: "after-cap",
          Type: "batch",
          TaskGroups: [
            { Name: "g", Tasks: [{ Name: "t", Driver: "raw_exec", Config: { command: "/bin/true" } }] },
          ],
        },
      }),
    });
    assert.equal(res.status, 200, await res.text());
    const log = fs.readFileSync(logFile, "utf8");
    assert.doesNotMatch(log, /unable to open database file|EMFILE/);
    if (registered < NODES) assert.match(log, /refusing connections \(raise LimitNOFILE\)/);
    passed = true;
  } finally {
    await sim.stop(false).catch(() => undefined);
    await server.stop(30_000);
    if (!passed) process.stderr.write(`--- server.log (tail) ---\n${logTail(logFile, 40)}\n`);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
