/**
 * The node simulator (bench/scale_sim.ts) as a child process, so its CPU is not counted as the
 * server's: one request at a time over IPC, each answered when done.
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { SimRequest } from "./scale_sim.js";

export class SimChild {
  private readonly child: ChildProcess;
  private pending: ((m: Record<string, unknown>) => void) | null = null;

  constructor() {
    this.child = fork(fileURLToPath(new URL("./scale_sim.js", import.meta.url)), [], { stdio: "inherit" });
    this.child.on("message", (m: Record<string, unknown>) => {
      const p = this.pending;
      this.pending = null;
      p?.(m);
    });
  }

  async ask(req: SimRequest): Promise<Record<string, unknown>> {
    const answer = new Promise<Record<string, unknown>>((resolve) => (this.pending = resolve));
    this.child.send(req);
    const m = await answer;
    if (m.op === "error") throw new Error(`simulator: ${String(m.message)}`);
    return m;
  }

  async heartbeats(): Promise<number> {
    const { counts } = (await this.ask({ op: "counts" })) as { counts: { heartbeats: number } };
    return counts.heartbeats;
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }
}
