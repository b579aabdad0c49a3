/**
 * The servers' per-volume lock on a real etcd (leader/volume_locks.ts): two "servers" (each a
 * ClusterKeyedMutex over its own EtcdLocks and session lease) never run work for one volume at
 * once; different volumes proceed in parallel; a holder that throws frees the lock; a dead
 * server's lock goes with its lease; a waiter that gives up (abort) leaves no key behind.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Etcd3, type Lease } from "etcd3";
import { nullLogger } from "../../../src/internal/log.js";
import { haKeys } from "../../../src/server/leader/keys.js";
import { ClusterKeyedMutex, EtcdLocks } from "../../../src/server/leader/volume_locks.js";
import { eventually } from "../../helpers/agent_process.js";
import { etcdAvailable, startEtcd, type EtcdServer } from "../../helpers/etcd_server.js";

const skip = etcdAvailable() ? false : "etcd is not installed (/usr/bin/etcd)";
const PREFIX = haKeys("/locks-test").volumeLocks;

let etcd: EtcdServer | undefined;
let client: Etcd3 | undefined;
before(async () => {
  if (skip) return;
  etcd = await startEtcd();
  client = new Etcd3({ hosts: etcd.endpoint });
});
after(async () => {
  client?.close();
  await etcd?.stop();
});

/** A server's lock: its own session lease (returned, to kill the server) and its mutex. */
async function server(name: string): Promise<{ mutex: ClusterKeyedMutex; lease: Lease }> {
  const lease = client!.lease(30, { autoKeepAlive: false });
  const locks = new EtcdLocks(client!, PREFIX, name, nullLogger);
  locks.rebind(await lease.grant());
  return { mutex: new ClusterKeyedMutex(() => locks), lease };
}

/** A promise and its resolver: work that runs until the test lets it finish. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

const lockKeys = async () => Object.keys(await client!.getAll().prefix(PREFIX).strings());

test(
  "two servers never hold one volume's lock at once; other volumes proceed",
  { skip, timeout: 20_000 },
  async () => {
    const a = await server("a");
    const b = await server("b");
    const events: string[] = [];
    const held = gate();
    const aEntered = gate();
    const first = a.mutex.run("default/v1", async () => {
      events.push("a in");
      aEntered.open();
      await held.wait;
      events.push("a out");
    });
    await aEntered.wait;
    const second = b.mutex.run("default/v1", async () => {
      events.push("b in");
    });
    // Another volume is not behind v1's holder.
    await b.mutex.run("default/v2", async () => {
      events.push("b v2");
    });
    assert.deepEqual(await lockKeys(), [`${PREFIX}default/v1`], "only v1 is held, by a");
    held.open();
    await Promise.all([first, second]);
    assert.deepEqual(events, ["a in", "b v2", "a out", "b in"]);
    assert.deepEqual(await lockKeys(), [], "every lock freed");
  },
);

test("a holder that throws frees the lock", { skip, timeout: 20_000 }, async () => {
  const a = await server("a");
  const b = await server("b");
  await assert.rejects(
    a.mutex.run("default/v3", async () => {
      throw new Error("boom");
    }),
    /boom/,
  );
  assert.equal(await b.mutex.run("default/v3", async () => "b ran"), "b ran");
  assert.deepEqual(await lockKeys(), []);
});

test(
  "a dead server's lock goes with its lease; an aborted waiter leaves nothing",
  { skip, timeout: 20_000 },
  async () => {
    const a = await server("a");
    const b = await server("b");
    const entered = gate();
    const never = new Promise<void>(() => undefined);
    void a.mutex.run("default/v4", async () => {
      entered.open();
      await never; // a dies holding it
    });
    await entered.wait;
    const ac = new AbortController();
    const waiting = b.mutex.run("default/v4", async () => "b ran too early", ac.signal);
    ac.abort(new Error("caller gave up"));
    await assert.rejects(waiting, /caller gave up/);
    assert.deepEqual(await lockKeys(), [`${PREFIX}default/v4`], "still a's");
    // a's process dies: its lease is revoked (or runs out), and its key with it.
    await a.lease.revoke();
    assert.equal(await b.mutex.run("default/v4", async () => "b ran"), "b ran");
    await eventually("b's lock to be freed", async () =>
      (await lockKeys()).length === 0 ? true : undefined,
    );
  },
);
