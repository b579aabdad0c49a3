/**
 * The receiving end of scheduler calls (leader/scheduler_forward.ts) on a loopback listener, with a
 * fake local scheduler and a fake store index: only a caller with the cluster secret is heard;
 * every field is checked (400 naming it); a server that does not lead answers 503 ERR_NO_LEADER
 * and runs nothing; the leader runs the pass only once its state has reached the sender's index.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { nullLogger } from "../../../src/internal/log.js";
import type { JobScheduler } from "../../../src/server/deps.js";
import type { IndexedStore } from "../../../src/server/leader/await_index.js";
import { CLUSTER_SECRET_HEADER } from "../../../src/server/leader/peer_http.js";
import {
  HttpSchedulerPeer,
  SCHEDULER_PATH,
  SchedulerForwardServer,
  type SchedulerCall,
} from "../../../src/server/leader/scheduler_forward.js";
import type { EvalResult } from "../../../src/server/scheduler/evaluate_in.js";
import { isBerthError } from "../../../src/structs/errors.js";

const SECRET = "s3cret";
const runs: string[] = [];
let retries = 0;
let leading = true;
let index = 10;

const local: JobScheduler = {
  evaluate(ns, id, trigger, opts): Promise<EvalResult> {
    runs.push(`${ns}/${id}/${trigger}/${JSON.stringify(opts)}@${index}`);
    return Promise.resolve({
      placed: 1,
      stopped: 0,
      failures: [],
      index,
      evalId: "ev1",
      blockedEvalId: "",
      followups: [],
      heldSlots: 0,
    });
  },
  retryBlocked() {
    retries++;
    return Promise.resolve();
  },
};

const store: IndexedStore = {
  index: () => index,
  waitFor: (_t, _m, _s, timeoutMs) => new Promise((r) => setTimeout(() => r(index), timeoutMs)),
};

let listener: http.Server;
let base = "";
before(async () => {
  const receiver = new SchedulerForwardServer(
    () => SECRET,
    undefined,
    () => leading,
    local,
    store,
    nullLogger,
  );
  listener = http.createServer((req, res) => {
    if (!receiver.handle(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => listener.close(() => resolve())));

async function post(body: unknown, secret: string | null = SECRET, method = "POST") {
  const res = await fetch(base + SCHEDULER_PATH, {
    method,
    headers: {
      "Content-Type": "application/json",
      ...(secret === null ? {} : { [CLUSTER_SECRET_HEADER]: secret }),
    },
    ...(method === "POST" ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, code: res.headers.get("x-berth-error-code"), text: (await res.text()).trim() };
}

const good = {
  Op: "evaluate",
  Namespace: "default",
  JobID: "web",
  Trigger: "job-register",
  Options: {},
  MinIndex: 0,
};

test("without the cluster secret: 403 before anything runs; GET: 405", async () => {
  for (const secret of [null, "guess", ""]) {
    const r = await post(good, secret);
    assert.deepEqual([r.status, r.code], [403, "ERR_PERMISSION_DENIED"]);
    assert.match(r.text, /^Permission denied: a forwarded scheduler call needs the cluster secret/);
  }
  assert.equal((await post(undefined, SECRET, "GET")).status, 405);
  assert.equal(runs.length, 0);
});

test("each bad field is a 400 naming it", async () => {
  const cases: [unknown, RegExp][] = [
    [[], /^body: must be a JSON object/],
    [{ ...good, MinIndex: -1 }, /^MinIndex: must be a non-negative integer/],
    [{ ...good, MinIndex: "3" }, /^MinIndex: /],
    [{ ...good, Op: "plan" }, /^Op: "plan" is not "evaluate" or "retry-blocked"/],
    [{ ...good, Namespace: "" }, /^Namespace: must be a namespace name/],
    [{ ...good, JobID: 7 }, /^JobID: must be a job ID/],
    [{ ...good, Trigger: "toString" }, /^Trigger: "toString" is not an eval trigger/],
    [{ ...good, Options: [] }, /^Options: must be a JSON object/],
    [{ ...good, Options: { Quiet: "yes" } }, /^Options\.Quiet: must be a boolean/],
    [{ ...good, Options: { FollowupEvalID: 1 } }, /^Options\.FollowupEvalID: must be an eval ID/],
  ];
  for (const [body, message] of cases) {
    const r = await post(body);
    assert.deepEqual([r.status, r.code], [400, "ERR_VALIDATION"], JSON.stringify(body));
    assert.match(r.text, message);
  }
  assert.equal(runs.length, 0);
});

test("a server that does not lead answers ERR_NO_LEADER and runs nothing", async () => {
  leading = false;
  try {
    const r = await post(good);
    assert.deepEqual([r.status, r.code], [503, "ERR_NO_LEADER"]);
    const retry = await post({ Op: "retry-blocked", MinIndex: 0 });
    assert.equal(retry.status, 503);
    assert.deepEqual([runs.length, retries], [0, 0]);
  } finally {
    leading = true;
  }
});

test("the leader runs the pass once its state reaches the sender's index; the peer reads the result", async () => {
  const peer = new HttpSchedulerPeer(() => SECRET, undefined);
  const call: SchedulerCall = {
    Op: "evaluate",
    Namespace: "ns",
    JobID: "web",
    Trigger: "node-update",
    Options: { Quiet: true },
    MinIndex: 12,
  };
  const pending = peer.send(base, call, new AbortController().signal);
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(runs.length, 0, "index 10 < 12: the pass waits");
  index = 12;
  const result = await pending;
  assert.deepEqual([result?.evalId, result?.placed], ["ev1", 1]);
  assert.deepEqual(runs, ['ns/web/node-update/{"quiet":true}@12']);

  assert.equal(
    await peer.send(base, { Op: "retry-blocked", MinIndex: 12 }, new AbortController().signal),
    null,
  );
  assert.equal(retries, 1);

  const wrong = new HttpSchedulerPeer(() => "wrong", undefined);
  await assert.rejects(
    wrong.send(base, call, new AbortController().signal),
    (err: unknown) => isBerthError(err) && err.code === "ERR_PERMISSION_DENIED",
  );
  listener.closeAllConnections();
  const gone = `http://127.0.0.1:${await closedPort()}`;
  await assert.rejects(
    peer.send(gone, call, new AbortController().signal),
    (err: unknown) =>
      isBerthError(err) &&
      err.code === "ERR_RPC_UNAVAILABLE" &&
      err.message.startsWith(`the leader at ${gone}`),
  );
});

async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
