/**
 * Leader election on a real etcd member (test/helpers/etcd_server.ts): one leader at a time among
 * three electors; a resigning leader is followed by another with a later term (the leader key's
 * create revision); a leader killed with SIGKILL (in a child process) is replaced once its lease
 * runs out; a leader cut off from etcd steps down by itself and leadership returns with etcd; a
 * leader whose keepalive answers are held back for longer than one old keepalive deadline (TTL/3),
 * but less than its step-down window, keeps its term (keepalives for a busy host).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { openEtcd } from "../../../src/server/leader/cluster.js";
import { LeaderElection } from "../../../src/server/leader/election.js";
import { haKeys } from "../../../src/server/leader/keys.js";
import { nullLogger } from "../../../src/internal/log.js";
import { etcdAvailable, startEtcd, type EtcdServer } from "../../helpers/etcd_server.js";
import { eventually } from "../../helpers/agent_process.js";
import { BlackholeProxy } from "../../helpers/blackhole_proxy.js";
import { memberNamed } from "../../builders/member.js";

const skip = etcdAvailable() ? false : "etcd is not installed (/usr/bin/etcd)";
const CHILD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../helpers/elector_child.js");
const TTL_SEC = 2;

let etcd: EtcdServer | undefined;
before(async () => {
  if (!skip) etcd = await startEtcd();
});
after(async () => {
  await etcd?.stop();
});

interface Event {
  name: string;
  kind: "gain" | "lose";
  revision?: string;
}

let prefixes = 0;
function freshPrefix(): string {
  return `/election-test-${process.pid}-${prefixes++}`;
}

/** An elector in this process; `events` records every gain and loss, checking one holder at most. */
function elector(
  endpoint: string,
  prefix: string,
  name: string,
  events: Event[],
  holders: { n: number },
  ttlSec = TTL_SEC,
) {
  const client = openEtcd([endpoint]);
  const election = new LeaderElection({
    client,
    keys: haKeys(prefix),
    self: memberNamed(name),
    ttlSec,
    log: nullLogger,
    onGain: (term) => {
      holders.n++;
      events.push({ name, kind: "gain", revision: term.revision });
      assert.ok(holders.n <= 1, `two leaders at once: ${JSON.stringify(events)}`);
    },
    onLose: () => {
      holders.n--;
      events.push({ name, kind: "lose" });
    },
  });
  return {
    name,
    election,
    async stop() {
      await election.stop();
      client.close();
    },
  };
}

async function leaderKeyRevision(endpoint: string, prefix: string): Promise<string | undefined> {
  const client = openEtcd([endpoint]);
  try {
    const res = await client.get(haKeys(prefix).leader).exec();
    return res.kvs[0]?.create_revision;
  } finally {
    client.close();
  }
}

test(
  "three electors: one leads at a time; when it resigns another leads with a later term",
  { skip },
  async () => {
    const endpoint = etcd!.endpoint;
    const prefix = freshPrefix();
    const events: Event[] = [];
    const holders = { n: 0 };
    const all = ["a", "b", "c"].map((n) => elector(endpoint, prefix, n, events, holders));
    try {
      for (const e of all) e.election.start();
      const first = await eventually(
        "a leader",
        () => Promise.resolve(all.find((e) => e.election.isLeader)),
        15_000,
        20,
      );
      // Two keepalive rounds later, still exactly one, and the key names its term.
      await new Promise((r) => setTimeout(r, (TTL_SEC * 1000 * 2) / 3));
      assert.deepEqual(
        all.filter((e) => e.election.isLeader).map((e) => e.name),
        [first.name],
      );
      const firstTerm = first.election.currentTerm!.revision;
      assert.equal(await leaderKeyRevision(endpoint, prefix), firstTerm);
      for (const e of all) {
        assert.equal(e.election.leader?.member.Name, `${first.name}.global`, `${e.name} knows the leader`);
      }

      await first.stop();
      const second = await eventually(
        "another leader",
        () => Promise.resolve(all.find((e) => e !== first && e.election.isLeader)),
        15_000,
        20,
      );
      const secondTerm = second.election.currentTerm!.revision;
      assert.ok(BigInt(secondTerm) > BigInt(firstTerm), `term ${secondTerm} follows ${firstTerm}`);
      assert.equal(await leaderKeyRevision(endpoint, prefix), secondTerm);
      assert.deepEqual(
        events.filter((e) => e.kind === "gain").map((e) => e.name),
        [first.name, second.name],
      );
    } finally {
      for (const e of all) await e.stop();
    }
    assert.equal(holders.n, 0, "every term ended");
  },
);

test("a leader killed with SIGKILL is replaced once its lease runs out", { skip }, async () => {
  const endpoint = etcd!.endpoint;
  const prefix = freshPrefix();
  const child = spawn(process.execPath, [CHILD, endpoint, prefix, "doomed", String(TTL_SEC)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines: string[] = [];
  let out = "";
  child.stdout.on("data", (b: Buffer) => {
    out += b.toString();
    const parts = out.split("\n");
    out = parts.pop() ?? "";
    lines.push(...parts);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const events: Event[] = [];
  const holders = { n: 0 };
  const heir = elector(endpoint, prefix, "heir", events, holders);
  try {
    const gained = await eventually(
      "the child to lead",
      () =>
        Promise.resolve(
          lines
            .map((l) => JSON.parse(l) as { event: string; revision?: string })
            .find((e) => e.event === "gain"),
        ),
      15_000,
      20,
    );
    heir.election.start();
    await eventually(
      "the heir to see the leader",
      () => Promise.resolve(heir.election.leader ?? undefined),
      15_000,
      20,
    );
    assert.equal(heir.election.isLeader, false, "the heir waits while the child leads");
    const killedAt = performance.now();
    child.kill("SIGKILL");
    await exited;
    await eventually(
      "the heir to lead",
      () => Promise.resolve(heir.election.isLeader || undefined),
      15_000,
      10,
    );
    const tookMs = Math.round(performance.now() - killedAt);
    console.log(`kill -9 → new leader: ${tookMs} ms (lease TTL ${TTL_SEC} s)`);
    assert.ok(BigInt(heir.election.currentTerm!.revision) > BigInt(gained.revision!));
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
    await heir.stop();
  }
  assert.equal(child.signalCode, "SIGKILL", "nothing left running");
});

test(
  "a leader cut off from etcd steps down by itself, and leads again when etcd returns",
  { skip },
  async () => {
    const own = await startEtcd();
    const prefix = freshPrefix();
    const events: Event[] = [];
    const holders = { n: 0 };
    const solo = elector(own.endpoint, prefix, "solo", events, holders);
    try {
      solo.election.start();
      await eventually(
        "solo to lead",
        () => Promise.resolve(solo.election.isLeader || undefined),
        15_000,
        20,
      );
      own.pause();
      await eventually(
        "solo to step down",
        () => Promise.resolve(!solo.election.isLeader || undefined),
        15_000,
        20,
      );
      assert.equal(solo.election.leader, null, "no leader known while etcd is away");
      own.resume();
      await eventually(
        "solo to lead again",
        () => Promise.resolve(solo.election.isLeader || undefined),
        30_000,
        50,
      );
      assert.deepEqual(
        events.map((e) => e.kind),
        ["gain", "lose", "gain"],
      );
    } finally {
      own.resume();
      await solo.stop();
      await own.stop();
    }
  },
);

test(
  "slow keepalive answers within the step-down window cost the leader no term",
  { skip, timeout: 60_000 },
  async () => {
    // TTL 3 s: step-down window 2.4 s, a keepalive every 0.5 s; each stall holds every answer back
    // 1.4 s — longer than the old per-keepalive deadline (TTL/3), shorter than the window minus
    // one interval, so some keepalive is always answered before the deadline.
    const proxy = await BlackholeProxy.start(new URL(etcd!.endpoint).host);
    const prefix = freshPrefix();
    const events: Event[] = [];
    const holders = { n: 0 };
    const solo = elector(`http://${proxy.address}`, prefix, "busy", events, holders, 3);
    try {
      solo.election.start();
      await eventually(
        "busy to lead",
        () => Promise.resolve(solo.election.isLeader || undefined),
        15_000,
        20,
      );
      for (let i = 0; i < 3; i++) {
        proxy.partition();
        await new Promise((r) => setTimeout(r, 1_400));
        proxy.heal();
        await new Promise((r) => setTimeout(r, 1_000));
      }
      assert.deepEqual(
        events.map((e) => e.kind),
        ["gain"],
        "one term throughout: no step-down from slow answers",
      );
    } finally {
      proxy.heal();
      await solo.stop();
      await proxy.close();
    }
  },
);
