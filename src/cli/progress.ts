/**
 * Live progress for a CLI operation whose HTTP request stays open until the server is done with it
 * (`volume create`, `volume delete`, `volume detach`, `volume snapshot create`). Quick operations
 * print nothing extra. Once one has run longer than `graceMs` (2 s), its progress goes to stderr
 * (stdout keeps the command's own result line, so scripts read what they always read), in the
 * shape of `job run`'s monitor:
 *
 *   ==> 2026-01-01T12:00:02Z: Detaching volume "demo" from node "3f1c9a2b": still in progress
 *       2026-01-01T12:00:02Z: claim 1a2b3c4d: taken; node-unpublish failing (attempt 2): …
 *       2026-01-01T12:00:05Z: claim 1a2b3c4d: node-detached
 *   ==> 2026-01-01T12:00:07Z: Detaching volume "demo" from node "3f1c9a2b": 7s in all
 *
 * `watch` reads what the server can show of the operation (a volume's claims and where their
 * release is) every `pollMs`; each line that was not in the previous reading is printed. A watch
 * that fails prints nothing (the operation's own answer is what counts). The operation's result or
 * error is returned or thrown unchanged.
 */
import { formatTimeNs } from "./format.js";
import type { CommandIO } from "./io.js";

export interface ProgressSpec {
  /** `Detaching volume "demo" from node "…"`. */
  what: string;
  /** The current state as lines; absent: only the elapsed time is shown. */
  watch?: () => Promise<string[]>;
  /** Before anything is printed; 2 s by default. */
  graceMs?: number;
  /** Between readings; 1 s by default (Nomad's monitors poll once a second). */
  pollMs?: number;
}

export const PROGRESS_GRACE_MS = 2_000;
export const PROGRESS_POLL_MS = 1_000;

export async function withProgress<T>(io: CommandIO, spec: ProgressSpec, op: () => Promise<T>): Promise<T> {
  const started = io.now();
  const time = () => formatTimeNs(io.now() * 1e6);
  let finished = false;
  let shown = false;
  const running = op().finally(() => {
    finished = true;
  });
  const watcher = (async () => {
    if (await settledWithin(running, spec.graceMs ?? PROGRESS_GRACE_MS)) return;
    shown = true;
    io.stderr(`==> ${time()}: ${spec.what}: still in progress`);
    let previous = new Set<string>();
    let lastPrint = io.now();
    while (!finished) {
      const lines = await (spec.watch?.() ?? Promise.resolve([])).catch(() => null);
      if (finished) break;
      if (lines) {
        for (const l of lines) if (!previous.has(l)) io.stderr(`    ${time()}: ${l}`);
        if (lines.some((l) => !previous.has(l))) lastPrint = io.now();
        previous = new Set(lines);
      }
      // Something every 10 s, so a long wait never looks hung.
      if (io.now() - lastPrint >= 10_000) {
        io.stderr(`    ${time()}: waiting (${elapsed(io.now() - started)})`);
        lastPrint = io.now();
      }
      await settledWithin(running, spec.pollMs ?? PROGRESS_POLL_MS);
    }
  })();
  try {
    return await running;
  } finally {
    await watcher;
    if (shown) io.stderr(`==> ${time()}: ${spec.what}: ${elapsed(io.now() - started)} in all`);
  }
}

/** "7s", "2m5s". */
function elapsed(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${s % 60}s`;
}

/** True when `p` settles within `ms` (real time: progress follows the clock, not io.sleep). */
function settledWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    const done = () => {
      clearTimeout(timer);
      resolve(true);
    };
    p.then(done, done);
  });
}
