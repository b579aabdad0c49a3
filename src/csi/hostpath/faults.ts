/**
 * Fault injection for csi-hostpath (`--faults=FILE`), so tests can make any RPC fail or hang the
 * way real storage does. FILE is JSON mapping a method name to one fault:
 *
 *   { "NodeStageVolume": { "code": "UNAVAILABLE", "times": 2 },
 *     "NodePublishVolume": { "hangMs": 3000, "times": 1 } }
 *   { "NodePublishVolume": { "noop": true, "times": 1000 } }
 *
 * - `code`: the call fails with that gRPC status (by name) instead of running.
 * - `hangMs`: the call waits that long first (holding the volume's in-flight slot, as a slow
 *   storage operation would), then runs normally — or fails with `code` when both are given.
 * - `answerAfterMs`: the call runs normally, then waits that long before it answers: its effect
 *   (e.g. a volume CreateVolume made) exists while the caller still waits — the window in which a
 *   caller that crashes never learns of it. Excludes `code`.
 * - `noop`: the call answers success without doing anything — a plugin that reports NodePublish
 *   success without mounting (its mounts stayed in another mount namespace, or it is simply buggy).
 * - `times`: how many calls of that method the fault applies to (default 1).
 * - `skip`: how many calls of that method run normally before the fault applies (default 0), e.g.
 *   to fail the second CreateVolume of a request and not the first.
 *
 * Contracts: the file is re-read whenever its mtime, size or inode changes (a stat per call, so it
 * is cheap to leave on); a change resets the consumed counts. A missing file means no faults. A
 * file that does not parse is reported once and injects nothing until it changes again.
 */
import fs from "node:fs";
import { status } from "@grpc/grpc-js";
import type { Logger } from "../../internal/log.js";
import { RpcError } from "./context.js";

export interface FaultSpec {
  code?: string;
  hangMs?: number;
  answerAfterMs?: number;
  noop?: boolean;
  times?: number;
  skip?: number;
}

/** What one call must do: wait `hangMs`, then fail with `error` when set, or answer success at once. */
export interface FaultAction {
  hangMs: number;
  /** Wait this long after the call ran, before answering. */
  answerAfterMs: number;
  error: InjectedFault | null;
  /** Answer success without running the call (ignored when `error` is set). */
  noop: boolean;
}

/** The error of an injected failure; the call log marks such calls. */
export class InjectedFault extends RpcError {}

export interface FaultSource {
  /** Consumes one use of `method`'s fault, if it has any left. */
  take(method: string): FaultAction | null;
}

/** A fault source reading `file`, or one that never injects anything without a file. */
export function faultSource(file: string | null, log: Logger): FaultSource {
  if (!file) return { take: () => null };
  return new FileFaults(file, log);
}

class FileFaults implements FaultSource {
  private stamp = "";
  private faults = new Map<string, FaultSpec>();
  private used = new Map<string, number>();

  constructor(
    private readonly file: string,
    private readonly log: Logger,
  ) {}

  take(method: string): FaultAction | null {
    this.refresh();
    const spec = this.faults.get(method);
    if (!spec) return null;
    const used = this.used.get(method) ?? 0;
    this.used.set(method, used + 1);
    const skip = spec.skip ?? 0;
    if (used < skip || used >= skip + (spec.times ?? 1)) return null;
    const error =
      spec.code === undefined
        ? null
        : new InjectedFault(statusCode(spec.code)!, `injected fault: ${method} answers ${spec.code}`);
    return {
      hangMs: spec.hangMs ?? 0,
      answerAfterMs: spec.answerAfterMs ?? 0,
      error,
      noop: spec.noop === true,
    };
  }

  private refresh(): void {
    let st: fs.Stats;
    try {
      st = fs.statSync(this.file);
    } catch {
      this.load("missing", new Map());
      return;
    }
    const stamp = `${st.ino}:${st.size}:${st.mtimeMs}`;
    if (stamp === this.stamp) return;
    try {
      this.load(stamp, parseFaults(fs.readFileSync(this.file, "utf8")));
    } catch (err) {
      this.log.warn("ignoring a faults file that does not parse", { file: this.file, error: err });
      this.load(stamp, new Map());
    }
  }

  private load(stamp: string, faults: Map<string, FaultSpec>): void {
    if (stamp === this.stamp) return;
    this.stamp = stamp;
    this.faults = faults;
    this.used = new Map();
  }
}

/** Parses and checks a faults file's text; throws with a one-line reason on bad input. */
export function parseFaults(text: string): Map<string, FaultSpec> {
  const raw: unknown = JSON.parse(text);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new Error("a faults file is a JSON object of method → fault");
  }
  const out = new Map<string, FaultSpec>();
  for (const [method, v] of Object.entries(raw as Record<string, unknown>)) {
    if (typeof v !== "object" || v === null) throw new Error(`${method}: a fault is an object`);
    const { code, hangMs, times, noop, answerAfterMs, skip } = v as Record<string, unknown>;
    if (code !== undefined && (typeof code !== "string" || statusCode(code) === null)) {
      throw new Error(`${method}: unknown gRPC status ${JSON.stringify(code)}`);
    }
    for (const [name, n] of [
      ["hangMs", hangMs],
      ["answerAfterMs", answerAfterMs],
      ["times", times],
      ["skip", skip],
    ] as const) {
      if (n !== undefined && (typeof n !== "number" || !Number.isInteger(n) || n < 0)) {
        throw new Error(`${method}: ${name} must be a non-negative integer`);
      }
    }
    if (noop !== undefined && typeof noop !== "boolean") throw new Error(`${method}: noop must be a boolean`);
    if (noop === true && code !== undefined) throw new Error(`${method}: noop and code exclude each other`);
    if (answerAfterMs !== undefined && code !== undefined) {
      throw new Error(`${method}: answerAfterMs and code exclude each other`);
    }
    if (code === undefined && hangMs === undefined && answerAfterMs === undefined && noop !== true) {
      throw new Error(`${method}: needs code, hangMs or noop, or answerAfterMs`);
    }
    out.set(method, {
      code,
      ...(hangMs === undefined ? {} : { hangMs: hangMs as number }),
      ...(answerAfterMs === undefined ? {} : { answerAfterMs: answerAfterMs as number }),
      ...(times === undefined ? {} : { times: times as number }),
      ...(skip === undefined ? {} : { skip: skip as number }),
      noop: noop === true ? true : undefined,
    });
  }
  return out;
}

/** The gRPC status named `name` (OK excluded: a fault is a failure), or null. */
function statusCode(name: string): status | null {
  if (name === "OK") return null;
  const code = (status as unknown as Record<string, unknown>)[name];
  return typeof code === "number" ? code : null;
}
