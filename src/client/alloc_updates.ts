/**
 * Coalesces alloc status updates and sends them to the server in batches: the latest update per
 * alloc wins, a flush runs shortly after the first change, and a failed send is kept and retried
 * with the next flush, so a server blip never loses a terminal status. Each send carries the
 * agent's next report order, so a send that waited in a hung server and is served after a newer
 * one changes nothing (the server keeps the newer status).
 */
import type { Logger } from "../internal/log.js";
import type { ReportOrder } from "../structs/node_report.js";
import type { AllocClientUpdate, ServerMethods } from "../structs/rpc.js";

export interface AllocUpdateSender {
  call(
    method: "Node.UpdateAllocs",
    req: ServerMethods["Node.UpdateAllocs"][0],
    opts?: { timeoutMs?: number },
  ): Promise<ServerMethods["Node.UpdateAllocs"][1]>;
}

export class AllocUpdateBatcher {
  private pending = new Map<string, AllocClientUpdate>();
  private timer: NodeJS.Timeout | null = null;
  private inflight: Promise<void> | null = null;

  constructor(
    private readonly nodeId: string,
    private readonly rpc: AllocUpdateSender,
    private readonly log: Logger,
    private readonly delayMs = 100,
    /** The order each send carries (client/report_order.ts); absent: unordered. */
    private readonly order: () => ReportOrder | undefined = () => undefined,
  ) {}

  push(update: AllocClientUpdate): void {
    this.pending.set(update.ID, update);
    this.timer ??= setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, this.delayMs);
  }

  /** Sends everything pending; resolves when the send finished (successfully or not). */
  async flush(): Promise<void> {
    await this.inflight;
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const ReportOrder = this.order();
    this.inflight = this.rpc
      .call(
        "Node.UpdateAllocs",
        { NodeID: this.nodeId, Allocs: [...batch.values()], ReportOrder },
        { timeoutMs: 10_000 },
      )
      .then(
        () => undefined,
        (err: unknown) => {
          this.log.warn("alloc status update failed; will retry", { error: err });
          for (const [id, u] of batch) if (!this.pending.has(id)) this.pending.set(id, u);
          this.timer ??= setTimeout(() => {
            this.timer = null;
            void this.flush();
          }, 1000);
        },
      );
    await this.inflight;
    this.inflight = null;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
