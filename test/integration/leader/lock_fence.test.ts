/**
 * The cluster volume lock is bound to its session (leader/volume_locks.ts, internal/fence.ts), on a
 * real etcd with two real elections (their own sessions and keepalives): server A takes a volume's
 * lock, then A is cut off from etcd by a blackholing TCP proxy on loopback (its keepalives go
 * unanswered, no connection reset — what a pause or a silent network drop looks like). Inside A's
 * work, the check a controller call makes before it is sent (NodeConnections.call) must fail with
 * ERR_FENCED *before* server B, waiting for the same lock, can take it — so A's controller call and
 * B's never overlap, whatever the plugin does.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { fenceRefusal } from "../../../src/internal/fence.js";
import { nullLogger } from "../../../src/internal/log.js";
import { NodeConnections } from "../../../src/server/clientconn/connections.js";
import { openEtcd } from "../../../src/server/leader/cluster.js";
import { LeaderElection } from "../../../src/server/leader/election.js";
import { haKeys } from "../../../src/server/leader/keys.js";
import { ClusterKeyedMutex, EtcdLocks } from "../../../src/server/leader/volume_locks.js";
import { isBerthError } from "../../../src/structs/errors.js";
import { eventually } from "../../helpers/agent_process.js";
import { etcdAvailable, startEtcd, type EtcdServer } from "../../helpers/etcd_server.js";
import { BlackholeProxy } from "../../helpers/blackhole_proxy.js";
import { memberNamed } from "../../builders/member.js";

const skip = etcdAvailable() ? false : "etcd is not installed (/usr/bin/etcd)";
const TTL_SEC = 2;
const PREFIX = `/lock-fence-${process.pid}`;

let etcd: EtcdServer | undefined;
before(async () => {
  if (!skip) etcd = await startEtcd();
});
after(async () => {
  await etcd?.stop();
});

/** One server's session (a real election) and its cluster-wide volume lock. */
function server(endpoint: string, name: string) {
  const client = openEtcd([endpoint]);
  const election = new LeaderElection({
    client,
    keys: haKeys(PREFIX),
    self: memberNamed(name),
    ttlSec: TTL_SEC,
    log: nullLogger,
    onGain: () => undefined,
    onLose: () => undefined,
  });
  const locks = new EtcdLocks(client, haKeys(PREFIX).volumeLocks, `id-${name}`, nullLogger, (leaseId) =>
    election.sessionRefusal(leaseId),
  );
  let sessions = 0;
  election.onSession = (leaseId) => {
    sessions++;
    locks.rebind(leaseId);
  };
  election.start();
  return {
    mutex: new ClusterKeyedMutex(() => locks),
    ready: () => sessions > 0,
    stop: async () => {
      locks.close();
      await election.stop();
      client.close();
    },
  };
}

test(
  "a lock holder whose session is no longer confirmed fresh refuses its controller call before another server can take the lock",
  { skip, timeout: 60_000 },
  async () => {
    const proxy = await BlackholeProxy.start(new URL(etcd!.endpoint).host);
    const a = server(`http://${proxy.address}`, "a");
    const b = server(etcd!.endpoint, "b");
    try {
      await eventually(
        "both sessions",
        () => Promise.resolve((a.ready() && b.ready()) || undefined),
        15_000,
        20,
      );
      const conns = new NodeConnections();
      const send = () => conns.call("n1", "ClientCSI.ControllerUnpublishVolume", {} as never);
      let refusedAt = 0;
      let takenByB = 0;
      let aEntered!: () => void;
      const entered = new Promise<void>((r) => (aEntered = r));
      const aWork = a.mutex.run("default/v1", async () => {
        assert.equal(fenceRefusal(), undefined, "a fresh session's lock holds");
        await assert.rejects(send(), (err) => isBerthError(err) && err.code === "ERR_NODE_NOT_CONNECTED");
        aEntered();
        // A controller call per 10 ms until one is refused (as a release walk would try), or
        // until B holds the lock (the bug: both would be sending).
        while (takenByB === 0) {
          const outcome = await send().catch((err: unknown) => err);
          if (isBerthError(outcome) && outcome.code === "ERR_FENCED") {
            refusedAt = Date.now();
            assert.match(outcome.message, /cluster lock on volume default\/v1 is no longer held/);
            return;
          }
          await new Promise((r) => setTimeout(r, 10));
        }
      });
      await entered;
      proxy.partition();
      const cutAt = Date.now();
      await b.mutex.run("default/v1", async () => {
        takenByB = Date.now();
      });
      await aWork;
      console.log(
        `cut off at 0 ms; A's call refused at +${refusedAt - cutAt} ms; B took the lock at +${takenByB - cutAt} ms`,
      );
      assert.ok(refusedAt > 0 && takenByB > 0);
      assert.ok(refusedAt < takenByB, "A stopped sending before B could take the lock");
    } finally {
      proxy.heal();
      await Promise.all([a.stop(), b.stop()]);
      await proxy.close();
    }
  },
);
