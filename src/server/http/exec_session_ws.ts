/**
 * The interactive side of the exec WebSocket (exec_ws.ts): a TTY session (`tty=true`), carried to
 * the alloc's node as an exec session (rpc_exec.ts). Nomad's frames both ways: from the client
 * `{"stdin": {"data": <base64>}}`, `{"stdin": {"close": true}}` and
 * `{"tty_size": {"height": H, "width": W}}`; to it `{"stdout": {"data": ...}}` (the terminal: a TTY
 * has one output stream), `{"stderr": {"data": ...}}`, then `{"exited": true, "result":
 * {"exit_code": N}}` before the socket closes.
 *
 * The command starts at the client's first frame (Nomad's CLI sends the terminal's size first, so
 * the command sees it from the start) or after START_WAIT_MS without one. Input is forwarded in
 * the order it came; output is polled and sent as it comes. A client that goes away ends the
 * session (the command is killed); a command that ends closes the socket with its exit code.
 */
import type { WebSocket } from "ws";
import { asBerthError, validationError } from "../../structs/errors.js";
import type { AllocOps } from "../rpc/alloc_ops.js";

/** How long the session waits for the client's first frame (its terminal size) before starting. */
export const START_WAIT_MS = 1_000;
/** One output poll's wait on the node when the command is quiet. */
const POLL_WAIT_MS = 10_000;
/** Most bytes of input one frame may carry. */
const MAX_FRAME = 1 << 20;

interface InFrame {
  stdin?: { data?: unknown; close?: unknown };
  tty_size?: { height?: unknown; width?: unknown };
}

interface Input {
  Stdin: string;
  Close: boolean;
  Height: number;
  Width: number;
}

/** A client frame as the node's input; throws a validation error naming the bad field. */
export function inputOf(raw: Buffer): Input {
  let f: InFrame;
  try {
    f = JSON.parse(raw.toString("utf8")) as InFrame;
  } catch {
    throw validationError("frame", "exec frames must be JSON");
  }
  const input: Input = { Stdin: "", Close: false, Height: 0, Width: 0 };
  if (f.stdin !== undefined) {
    if (f.stdin.data !== undefined) {
      if (typeof f.stdin.data !== "string") throw validationError("stdin.data", "must be base64 text");
      if (Buffer.byteLength(f.stdin.data) > MAX_FRAME) throw validationError("stdin.data", "is too large");
      input.Stdin = f.stdin.data;
    }
    input.Close = f.stdin.close === true;
  }
  if (f.tty_size !== undefined) {
    const { height, width } = f.tty_size;
    const ok = (v: unknown) => typeof v === "number" && Number.isInteger(v) && v > 0 && v < 65536;
    if (!ok(height)) throw validationError("tty_size.height", "must be an integer from 1 to 65535");
    if (!ok(width)) throw validationError("tty_size.width", "must be an integer from 1 to 65535");
    input.Height = height as number;
    input.Width = width as number;
  }
  return input;
}

export function runTtySession(
  ws: WebSocket,
  ops: AllocOps,
  target: { allocId: string; task: string; command: string[] },
  fail: (ws: WebSocket, err: unknown) => void,
): void {
  const session = new TtySession(ws, ops, target, fail);
  const timer = setTimeout(() => session.start(), START_WAIT_MS);
  ws.on("message", (raw: Buffer) => {
    let input: Input;
    try {
      input = inputOf(raw);
    } catch (err) {
      return fail(ws, asBerthError(err));
    }
    clearTimeout(timer);
    session.input(input);
  });
  ws.on("close", () => {
    clearTimeout(timer);
    session.end();
  });
}

/**
 * One TTY session between a WebSocket and the node's exec session. Input that comes before the
 * node's session is open waits in `early` (the first terminal size among it opens the session);
 * after, each input goes in order, one at a time. `end` (the client went away) stops the output
 * poll and closes the node's session, also one that opens after it.
 */
class TtySession {
  private readonly gone = new AbortController();
  private readonly early: Input[] = [];
  private sessionId: string | null = null;
  private chain: Promise<unknown> = Promise.resolve();
  private started = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly ops: AllocOps,
    private readonly target: { allocId: string; task: string; command: string[] },
    private readonly fail: (ws: WebSocket, err: unknown) => void,
  ) {}

  /** A client frame: held until the session is open (and opens it), else sent in order. */
  input(input: Input): void {
    if (this.sessionId === null) {
      this.early.push(input);
      this.start();
    } else this.send(input);
  }

  /** Opens the node's session (once), sends the early input, then pumps its output to the client. */
  start(): void {
    if (this.started) return;
    this.started = true;
    void this.run();
  }

  end(): void {
    this.gone.abort();
    if (this.sessionId !== null) void this.closeSession(this.sessionId);
  }

  private async run(): Promise<void> {
    const { allocId, task, command } = this.target;
    const size = this.early.find((i) => i.Height > 0);
    try {
      const open = await this.ops.execSession(allocId, "ClientAlloc.ExecOpen", {
        AllocID: allocId,
        Task: task,
        Command: command,
        Tty: true,
        Height: size?.Height ?? 0,
        Width: size?.Width ?? 0,
      });
      this.sessionId = open.SessionID;
      if (this.gone.signal.aborted) return void this.closeSession(open.SessionID);
      for (const i of this.early) this.send(i === size ? { ...i, Height: 0, Width: 0 } : i);
      this.early.length = 0;
      await this.pump(open.SessionID);
    } catch (err) {
      if (!this.gone.signal.aborted) this.fail(this.ws, err);
    }
  }

  private send(input: Input): void {
    const id = this.sessionId!;
    this.chain = this.chain
      .then(() =>
        this.ops.execSession(this.target.allocId, "ClientAlloc.ExecInput", { SessionID: id, ...input }),
      )
      // The command ended meanwhile (its session is gone): the output poll reports the exit.
      .catch((err: unknown) => {
        if (asBerthError(err).code !== "ERR_NOT_FOUND") this.fail(this.ws, err);
      });
  }

  private closeSession(id: string): Promise<unknown> {
    return this.ops
      .execSession(this.target.allocId, "ClientAlloc.ExecClose", { SessionID: id })
      .catch(() => undefined);
  }

  /** Polls the node for output until the command exits (then the socket closes) or the client goes. */
  private async pump(id: string): Promise<void> {
    const ws = this.ws;
    for (;;) {
      const out = await this.ops.execSession(
        this.target.allocId,
        "ClientAlloc.ExecOutput",
        { SessionID: id, WaitMs: POLL_WAIT_MS },
        { signal: this.gone.signal, timeoutMs: POLL_WAIT_MS + 10_000 },
      );
      if (this.gone.signal.aborted) return;
      if (out.Stdout) ws.send(JSON.stringify({ stdout: { data: out.Stdout } }));
      if (out.Stderr) ws.send(JSON.stringify({ stderr: { data: out.Stderr } }));
      if (out.Exited) {
        ws.send(JSON.stringify({ stdout: { close: true } }));
        ws.send(JSON.stringify({ stderr: { close: true } }));
        ws.send(JSON.stringify({ exited: true, result: { exit_code: out.ExitCode } }));
        ws.close(1000);
        return;
      }
    }
  }
}
