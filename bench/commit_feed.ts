/**
 * What the commit feed costs the store's writes (issue 15), in CPU time per txn, measured in one
 * run with the modes interleaved (round after round) so machine load hits them alike:
 *
 * - `none`:     no listener (the store records nothing: one boolean check per txn);
 * - `broker`:   the event broker follows the store (as a running server does) and nobody streams:
 *               each txn's changes are kept in the bounded buffer, unconverted;
 * - `stream`:   as `broker`, and a listener reads every record (the cost of a subscriber).
 * - `base`:     with `BASE_STORE=<module>` (the SqliteStateStore module of a build without the feed,
 *               e.g. bundled with esbuild from the previous commit), that store, no listener; with
 *               `CUR_STORE=<module>` this build's store bundled the same way runs the other modes.
 *
 * Each txn puts an alloc (with its job snapshot, as the scheduler does) and a volume update, on an
 * in-memory store (no disk: the bench measures CPU, not fsync).
 *
 *   node dist/bench/commit_feed.js [txns=3000] [rounds=5]
 */
import { nullLogger } from "../src/internal/log.js";
import { EventBroker } from "../src/server/events/broker.js";
import { SqliteStateStore } from "../src/server/state/local/sqlite_store.js";
import type { StateStore } from "../src/server/state/store.js";
import { allocOf } from "../test/builders/alloc.js";
import { csiJob } from "../test/builders/job.js";
import { makeVolume } from "../test/builders/volume.js";

const TXNS = Number(process.argv[2] ?? 3000);
const ROUNDS = Number(process.argv[3] ?? 5);

type Mode = "none" | "broker" | "stream" | "base";
type StoreCtor = new (dir: string | null, opts: { log: typeof nullLogger }) => StateStore;

async function run(mode: Mode, Ctor: StoreCtor): Promise<number> {
  const store = new Ctor(null, { log: nullLogger });
  const broker = new EventBroker(store, nullLogger);
  if (mode === "broker" || mode === "stream") broker.start();
  if (mode === "stream") {
    store.onCommit((txn) => {
      for (const c of txn.changes) void c.record;
    });
  }
  const job = csiJob("web", { count: 1 });
  await store.txn((tx) => tx.putVolume(makeVolume("vol1")));
  const cpu0 = process.cpuUsage();
  // Several in flight at once, as a busy server has them: they share group commits.
  const inFlight: Promise<unknown>[] = [];
  for (let i = 0; i < TXNS; i++) {
    inFlight.push(
      store.txn((tx) => {
        tx.putAlloc(allocOf(job, `n${i % 50}`, { ID: `a${i}` }));
        tx.putVolume(makeVolume("vol1", { Capacity: i }));
      }),
    );
    if (inFlight.length >= 64) await Promise.all(inFlight.splice(0));
  }
  await Promise.all(inFlight);
  const cpu = process.cpuUsage(cpu0);
  broker.stop();
  store.close();
  return (cpu.user + cpu.system) / TXNS;
}

async function main(): Promise<void> {
  // CUR_STORE: this build's store bundled the same way as BASE_STORE, so the two compare alike.
  const cur = process.env.CUR_STORE
    ? ((await import(process.env.CUR_STORE)) as { SqliteStateStore: StoreCtor }).SqliteStateStore
    : SqliteStateStore;
  const modes: [Mode, StoreCtor][] = [
    ["none", cur],
    ["broker", cur],
    ["stream", cur],
  ];
  const basePath = process.env.BASE_STORE;
  if (basePath) {
    const mod = (await import(basePath)) as { SqliteStateStore: StoreCtor };
    modes.push(["base", mod.SqliteStateStore]);
  }
  const samples = new Map<Mode, number[]>(modes.map(([m]) => [m, []]));
  await run("none", cur); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    for (const [m, ctor] of modes) samples.get(m)!.push(await run(m, ctor));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  // The ratio is taken round by round (modes run back to back), then its median: load drifts
  // between rounds far more than within one.
  const none = samples.get("none")!;
  console.log(
    `commit feed: ${TXNS} txns × ${ROUNDS} rounds, CPU µs per txn (median), per-round ratio to none (median)`,
  );
  for (const [m] of modes) {
    const xs = samples.get(m)!;
    const ratio = median(xs.map((v, i) => v / none[i]!));
    console.log(`  ${m.padEnd(7)} ${median(xs).toFixed(1).padStart(8)} µs   ×${ratio.toFixed(3)}`);
  }
}

await main();
