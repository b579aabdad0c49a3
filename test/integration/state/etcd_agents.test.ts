/**
 * Two real `berth agent -server -etcd-endpoints=…` processes on one real etcd: a write through one
 * server's HTTP API is read through the other's and answers the other's blocking query; with etcd
 * paused a write answers 503 with X-Berth-Error-Code ERR_STATE_UNAVAILABLE naming etcd (never a
 * 500), reads keep answering, and once etcd resumes writes work again.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AgentProcess, eventually, freePort, getJson, logTail } from "../../helpers/agent_process.js";
import { startEtcd, type EtcdServer } from "../../helpers/etcd_server.js";

interface Ns {
  Name: string;
  Description: string;
}

let etcd: EtcdServer;
let dir: string;
const agents: { proc: AgentProcess; base: string; log: string }[] = [];

before(async () => {
  etcd = await startEtcd();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-etcd-agents-"));
  for (const name of ["s1", "s2"]) {
    const port = await freePort();
    const log = path.join(dir, `${name}.log`);
    const proc = new AgentProcess(
      [
        "-server",
        `-data-dir=${path.join(dir, name)}`,
        `-http-addr=127.0.0.1:${port}`,
        `-etcd-endpoints=${etcd.endpoint}`,
      ],
      log,
    );
    agents.push({ proc, base: `http://127.0.0.1:${port}`, log });
  }
  for (const a of agents) {
    await eventually(
      `server ${a.base} answering`,
      () => getJson<Ns[]>(a.base, "/v1/namespaces"),
      60_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${logTail(a.log)}`);
    });
  }
});

after(async () => {
  etcd?.resume();
  for (const a of agents) await a.proc.stop(20_000);
  assert.ok(
    agents.every((a) => !a.proc.running),
    "no berth server left running",
  );
  await etcd?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const put = (base: string, name: string, description: string) =>
  fetch(`${base}/v1/namespace/${name}`, {
    method: "PUT",
    body: JSON.stringify({ Name: name, Description: description }),
  });

describe("berth servers on etcd", () => {
  test("a write through one server is read through the other and answers its blocking query", async () => {
    const [s1, s2] = agents;
    // A blocking query on index 0 answers at once (Nomad's rule): give the table an index first.
    assert.equal((await put(s1!.base, "warm", "")).status, 200);
    await eventually("s2 sees the first write", async () =>
      (await getJson<Ns[]>(s2!.base, "/v1/namespaces")).some((n) => n.Name === "warm") ? true : undefined,
    );
    const first = await fetch(`${s2!.base}/v1/namespaces`);
    const index = Number(first.headers.get("X-Nomad-Index"));
    const blocking = fetch(`${s2!.base}/v1/namespaces?index=${index}&wait=30s`);
    const res = await put(s1!.base, "prod", "written on s1");
    assert.equal(res.status, 200, await res.text());
    const answer = await blocking;
    assert.ok(
      Number(answer.headers.get("X-Nomad-Index")) > index,
      "s2's blocking query woke with a new index",
    );
    const names = ((await answer.json()) as Ns[]).map((n) => n.Name);
    assert.deepEqual(names, ["default", "prod", "warm"]);
    assert.equal((await getJson<Ns>(s2!.base, "/v1/namespace/prod")).Description, "written on s1");
  });

  test("etcd paused: a write answers 503 ERR_STATE_UNAVAILABLE naming etcd, reads answer; resumed: writes work", async () => {
    const [s1, s2] = agents;
    etcd.pause();
    try {
      const res = await put(s1!.base, "paused", "while etcd is paused");
      const body = await res.text();
      assert.equal(res.status, 503, body);
      assert.equal(res.headers.get("X-Berth-Error-Code"), "ERR_STATE_UNAVAILABLE");
      assert.match(body, new RegExp(`etcd at ${etcd.endpoint} is unavailable`));
      assert.equal(
        (await getJson<Ns>(s1!.base, "/v1/namespace/prod")).Name,
        "prod",
        "reads serve the last state",
      );
    } finally {
      etcd.resume();
    }
    await eventually(
      "a write after etcd resumed",
      async () => ((await put(s2!.base, "after", "x")).ok ? true : undefined),
      30_000,
    );
    await eventually("s1 sees it", async () => {
      const names = (await getJson<Ns[]>(s1!.base, "/v1/namespaces")).map((n) => n.Name);
      return names.includes("after") ? names : undefined;
    });
  });
});
