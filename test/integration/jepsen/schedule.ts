/**
 * The seed and fault schedule of a Jepsen-style run: a seeded PRNG (the seed is printed;
 * `BERTH_JEPSEN_SEED` replays it), the faults shuffled by it, and the environment switches
 * (`BERTH_JEPSEN_SKIP=1` skips the runs, `BERTH_JEPSEN_LONG=1` enables the long variants).
 */
import os from "node:os";
import path from "node:path";
import type { JepsenCluster } from "./cluster.js";
import type { FaultName } from "./faults.js";

export function jepsenSeed(): number {
  const env = process.env.BERTH_JEPSEN_SEED;
  return env !== undefined && env !== "" ? Number(env) : Math.floor(Math.random() * 2 ** 31);
}

export const LONG = process.env.BERTH_JEPSEN_LONG === "1";
/** `BERTH_JEPSEN_KEEP=1`: the run's logs are copied to <tmp>/berth-jepsen-logs/<name> before cleanup. */
export const KEEP = process.env.BERTH_JEPSEN_KEEP === "1";
export const SKIPPED = process.env.BERTH_JEPSEN_SKIP === "1";

/** `counts` of each fault, in an order the PRNG shuffles (Fisher–Yates). */
export function schedule(rand: () => number, counts: Partial<Record<FaultName, number>>): FaultName[] {
  const out: FaultName[] = [];
  for (const [f, n] of Object.entries(counts) as [FaultName, number][])
    for (let i = 0; i < n; i++) out.push(f);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** A line on stderr, prefixed so a run's lines stand out among the test runner's. */
export function say(line: string): void {
  process.stderr.write(`[jepsen] ${line}\n`);
}

/** With KEEP, copies the cluster's logs out of its dir (which cleanup removes) and says where. */
export function keepLogs(cluster: JepsenCluster, name: string): void {
  if (!KEEP) return;
  const dest = path.join(os.tmpdir(), "berth-jepsen-logs", name);
  cluster.keepLogs(dest);
  say(`logs kept in ${dest}`);
}
