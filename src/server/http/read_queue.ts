/**
 * Reads take turns with everything else on the event loop, so they never starve writes.
 *
 * The server runs on one thread. A write (PUT /v1/jobs) needs several turns of the event loop —
 * its body arrives, it is stored, the scheduler evaluates it, it is answered — and at each turn it
 * waits behind all the work queued before it. When many clients poll list routes, each turn used
 * to hold one full list read per polling client (milliseconds each for a big cluster), so a write
 * took as many times longer as there were readers (issue 10: 50 job submits 20× slower).
 *
 * Here a GET is not handled where it arrives: it joins a queue, and the queue hands out one read
 * per loop iteration (setImmediate: the next read starts only after the loop has polled I/O and
 * run the callbacks of everything else that became ready, writes included). A write's turn then
 * waits for at most one read, however many are queued. Reads are not slowed: they were never
 * parallel (one thread), only their order changes — oldest first. A blocking query is admitted
 * like any read and then waits inside its route as before. Writes (any other method) and the
 * agents' RPC upgrade do not queue.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export class ReadQueue {
  private readonly queue: [IncomingMessage, ServerResponse][] = [];
  private scheduled = false;

  constructor(private readonly handler: Handler) {}

  /** The request listener: reads queue, everything else is handled at once. */
  readonly listener = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      this.handler(req, res);
      return;
    }
    this.queue.push([req, res]);
    this.schedule();
  };

  /** Reads waiting for their turn (diagnostics, tests). */
  get waiting(): number {
    return this.queue.length;
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.next();
      this.schedule();
    });
  }

  /** Hands the oldest read whose client is still there to the handler. */
  private next(): void {
    for (;;) {
      const item = this.queue.shift();
      if (!item) return;
      const [req, res] = item;
      // A client that gave up while queued costs nothing more.
      if (res.destroyed || req.destroyed || req.socket.destroyed) continue;
      this.handler(req, res);
      return;
    }
  }
}
