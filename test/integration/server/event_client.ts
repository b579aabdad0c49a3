/**
 * A test client of `GET /v1/event/stream` over real HTTP: collects the newline-delimited JSON
 * frames as they arrive and lets a test wait for one (with a generous bound, so a missing event
 * fails the test instead of hanging it).
 */
import http from "node:http";

export interface StreamEvent {
  Topic: string;
  Type: string;
  Key: string;
  Namespace: string;
  FilterKeys: string[] | null;
  Index: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- payloads of every topic
  Payload: any;
}

export interface Frame {
  Index?: number;
  Events?: StreamEvent[];
}

export interface OpenStream {
  status: number;
  /** Every frame so far, heartbeats (`{}`) included, in arrival order. */
  frames: Frame[];
  /** The raw text received so far. */
  text: string;
  /** Resolves with the first frame (from `from` on) that `pred` accepts. */
  waitFor(pred: (f: Frame) => boolean, from?: number): Promise<Frame>;
  /** Resolves once the server has ended the response or dropped the connection. */
  ended: Promise<void>;
  close(): void;
}

const WAIT_BOUND_MS = 15_000;

export function openStream(
  base: string,
  query: string,
  headers: Record<string, string> = {},
): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}/v1/event/stream${query}`, { headers }, (res) => {
      res.setEncoding("utf8");
      const frames: Frame[] = [];
      const waiters = new Set<() => void>();
      let pending = "";
      let endedResolve!: () => void;
      const ended = new Promise<void>((r) => (endedResolve = r));
      const s: OpenStream = {
        status: res.statusCode ?? 0,
        frames,
        text: "",
        ended,
        close: () => req.destroy(),
        waitFor(pred, from = 0) {
          return new Promise((ok, fail) => {
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`no matching frame within ${WAIT_BOUND_MS} ms; got ${JSON.stringify(frames)}`));
            }, WAIT_BOUND_MS);
            const check = () => {
              const f = frames.slice(from).find(pred);
              if (f) {
                clearTimeout(timer);
                waiters.delete(check);
                ok(f);
              }
            };
            waiters.add(check);
            check();
          });
        },
      };
      res.on("data", (chunk: string) => {
        s.text += chunk;
        pending += chunk;
        let nl: number;
        while ((nl = pending.indexOf("\n")) >= 0) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          if (line.trim() !== "" && res.statusCode === 200) frames.push(JSON.parse(line) as Frame);
        }
        for (const w of [...waiters]) w();
      });
      res.on("close", () => endedResolve());
      res.on("error", () => endedResolve());
      resolve(s);
    });
    req.on("error", reject);
  });
}

/** Resolves once the stream has ended; fails the test if it is still open after a generous bound. */
export async function endedWithin(s: OpenStream): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, fail) => {
    timer = setTimeout(
      () => fail(new Error(`the stream is still open after ${WAIT_BOUND_MS} ms`)),
      WAIT_BOUND_MS,
    );
  });
  try {
    await Promise.race([s.ended, bound]);
  } finally {
    clearTimeout(timer);
  }
}

/** The event frames (heartbeats left out). */
export function eventFrames(s: OpenStream): Required<Frame>[] {
  return s.frames.filter((f): f is Required<Frame> => f.Index !== undefined);
}

/** Whether the frame has an event of `type` for key `key`. */
export function hasEvent(type: string, key: string) {
  return (f: Frame) => (f.Events ?? []).some((e) => e.Type === type && e.Key === key);
}
