/**
 * Issue 32: a rolling upgrade of servers whose state is on etcd, from the previous release (same
 * state schema) to this one, one server at a time while the other serves:
 * 1. two servers of the previous release share a real etcd; the leader takes a namespace and jobs;
 * 2. the follower is replaced by this release: it loads the old release's state, serves reads, and
 *    forwards writes to the old leader, which applies them (when the two releases' state schemas
 *    differ, both old servers stop first and the new one migrates the state, as the README says);
 * 3. the old leader is stopped: the new server takes the lead and keeps every record and writes;
 * 4. the last old server is replaced: both servers of this release agree on the leader and state.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import {
  AgentProcess,
  eventually,
  freePort,
  getJson,
  killProcessGroupsUnder,
  logTail,
  runCli,
} from "../helpers/agent_process.js";
import { etcdAvailable, startEtcd, type EtcdServer } from "../helpers/etcd_server.js";
import { SCHEMA_VERSION } from "../../src/server/state/engine/schema.js";
import {
  PREVIOUS_RELEASE,
  previousReleaseSchema,
  unpackPreviousRelease,
} from "../helpers/previous_release.js";

let dir: string;
let oldBin: string;
let etcd: EtcdServer | undefined;
const agents: { name: string; proc: AgentProcess }[] = [];
let passed = false;

before(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-upgrade-etcd-")));
  oldBin = unpackPreviousRelease(dir);
});

after(async () => {
  for (const a of agents) a.proc.kill();
  const left = killProcessGroupsUnder(dir);
  if (!passed) {
    for (const a of agents)
      process.stderr.write(`${a.name}.log:\n${logTail(path.join(dir, `${a.name}.log`), 30)}\n`);
  }
  await etcd?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  assert.deepEqual(left, [], "no process was left running");
});

interface Server {
  name: string;
  port: number;
  base: string;
  proc: AgentProcess;
}

/** A server named `name` (its data dir is `dir/<data>`) on the shared etcd; `bin` undefined: this release. */
function server(name: string, port: number, bin: string | undefined, log: string): Server {
  const proc = new AgentProcess(
    [
      "-server",
      "-data-dir",
      path.join(dir, name),
      "-http-addr",
      `127.0.0.1:${port}`,
      `-node-name=${name}`,
      `-etcd-endpoints=${etcd!.endpoint}`,
    ],
    path.join(dir, `${log}.log`),
    {},
    { bin },
  );
  agents.push({ name: log, proc });
  return { name, port, base: `http://127.0.0.1:${port}`, proc };
}

async function leaderOf(s: Server): Promise<string | undefined> {
  const l = await getJson<string>(s.base, "/v1/status/leader").catch(() => "");
  return l === "" ? undefined : l;
}

/** Waits until every server of `all` names the same leader, one of them; returns it. */
function agreedLeader(all: Server[]): Promise<Server> {
  return eventually(
    "the servers to agree on a leader",
    async () => {
      const seen = await Promise.all(all.map(leaderOf));
      const first = seen[0];
      if (first === undefined || seen.some((l) => l !== first)) return undefined;
      return all.find((s) => s.base.endsWith(first));
    },
    30_000,
  );
}

const jobSpec = (id: string) =>
  `job "${id}" {\n  namespace = "prod"\n  type = "batch"\n  group "g" {\n    task "t" {\n` +
  `      driver = "raw_exec"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n`;

test(
  `a rolling upgrade of servers on etcd from ${PREVIOUS_RELEASE}, one at a time, keeps the state and a leader`,
  { skip: !etcdAvailable() && "no etcd" },
  async () => {
    etcd = await startEtcd();
    const ports = [await freePort(), await freePort()];
    const cli = async (s: Server, ...args: string[]) => {
      const r = await runCli(args, { BERTH_ADDR: s.base, NOMAD_ADDR: "" });
      assert.equal(r.code, 0, `berth ${args.join(" ")} at ${s.name}: ${r.stderr}`);
      return r.stdout;
    };
    const run = async (s: Server, id: string) => {
      const file = path.join(dir, `${id}.hcl`);
      fs.writeFileSync(file, jobSpec(id));
      await cli(s, "job", "run", "-detach", file);
    };
    const jobIds = async (s: Server) =>
      (await getJson<{ ID: string }[]>(s.base, "/v1/jobs?namespace=prod")).map((j) => j.ID).sort();

    // 1. The previous release on both servers.
    const oldA = server("a", ports[0]!, oldBin, "a-old");
    const oldB = server("b", ports[1]!, oldBin, "b-old");
    const firstLeader = await agreedLeader([oldA, oldB]);
    await cli(firstLeader, "namespace", "apply", "-description", "upgraded", "prod");
    await run(firstLeader, "before");

    // 2. The follower first: this release loads the old release's state and forwards writes to it.
    // Across a schema change no rolling is possible (README "Upgrading"): every old server stops
    // first and the first new one migrates the state in etcd.
    const rolling = (await previousReleaseSchema(oldBin)) === SCHEMA_VERSION;
    const oldFollower = firstLeader === oldA ? oldB : oldA;
    const oldLeader = firstLeader;
    assert.equal(await oldFollower.proc.stop(), 0, "the old follower stopped cleanly");
    if (!rolling) assert.equal(await oldLeader.proc.stop(), 0, "the old leader stopped cleanly");
    const newFollower = server(oldFollower.name, oldFollower.port, undefined, `${oldFollower.name}-new`);
    const leaderNow = await agreedLeader(rolling ? [oldLeader, newFollower] : [newFollower]);
    assert.equal(leaderNow.name, rolling ? oldLeader.name : newFollower.name);
    await eventually("the new server to read the old release's records", async () =>
      (await jobIds(newFollower).catch((): string[] => [])).includes("before") ? true : undefined,
    );
    await run(newFollower, "through-new");
    assert.deepEqual(
      await jobIds(leaderNow),
      ["before", "through-new"],
      "the leader applied the write made through the new server",
    );
    assert.deepEqual(await getJson<unknown[]>(newFollower.base, "/v1/operator/quarantine"), []);

    // 3. The old leader goes: the new server leads, with every record.
    if (rolling) assert.equal(await oldLeader.proc.stop(), 0, "the old leader stopped cleanly");
    assert.equal((await agreedLeader([newFollower])).name, newFollower.name);
    await run(newFollower, "after");
    assert.deepEqual(await jobIds(newFollower), ["after", "before", "through-new"]);
    const ns = await getJson<{ Name: string; Description: string }>(newFollower.base, "/v1/namespace/prod");
    assert.equal(ns.Description, "upgraded");

    // 4. The last old server, replaced.
    const last = server(oldLeader.name, oldLeader.port, undefined, `${oldLeader.name}-new`);
    await agreedLeader([newFollower, last]);
    await eventually("the replaced server to have every record", async () =>
      (await jobIds(last).catch((): string[] => [])).length === 3 ? true : undefined,
    );
    for (const s of [newFollower, last]) assert.equal(await s.proc.stop(), 0);
    passed = true;
  },
);
