/**
 * The order of this agent's reports about its node, Node.Register and Node.UpdateFingerprint
 * (structs/node_report.ts: the server refuses a report older than one it applied, so a report
 * that waited in a hung server's socket cannot roll the node back). `[epoch, seq]`: the epoch grows
 * with every start of the agent, seq with every report of this process.
 *
 * The epoch is kept in `<client dir>/report-epoch`, written (fsynced, replaced by rename) before
 * the first report, so a restart never goes back. It is at least the wall clock in milliseconds:
 * an agent whose file was lost (the node ID kept) still starts above every earlier epoch, unless
 * the clock was set back by more than the time since that earlier start.
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { ReportOrder } from "../structs/node_report.js";

export class ReportClock {
  private seq = 0;

  private constructor(private readonly epoch: number) {}

  /** Reads the previous epoch in `clientDir`, stores the next one and returns the clock. */
  static async open(clientDir: string, nowMs: number = Date.now()): Promise<ReportClock> {
    const file = path.join(clientDir, "report-epoch");
    let previous = 0;
    try {
      const n = Number((await fs.readFile(file, "utf8")).trim());
      if (Number.isSafeInteger(n) && n >= 0) previous = n;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    const epoch = Math.max(previous + 1, Math.floor(nowMs));
    await fs.mkdir(clientDir, { recursive: true });
    const tmp = file + ".tmp";
    const fh = await fs.open(tmp, "w", 0o600);
    try {
      await fh.writeFile(`${epoch}\n`);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.rename(tmp, file);
    return new ReportClock(epoch);
  }

  /** The order of the report about to be sent: after every earlier one of this node. */
  next(): ReportOrder {
    this.seq++;
    return [this.epoch, this.seq];
  }
}
