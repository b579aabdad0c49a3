/**
 * `GET /v1/client/allocation/:id/exec?task=&command=["cmd",...]&tty=` upgraded to a WebSocket, in
 * Nomad's exec protocol: the client sends `{"stdin": {"data": <base64>}}` frames and
 * `{"stdin": {"close": true}}`; the server answers `{"stdout": {"data": ...}}`,
 * `{"stderr": {"data": ...}}`, then `{"exited": true, "result": {"exit_code": N}}` and closes.
 *
 * Without a TTY the command runs once standard input is closed (or the client sent none within
 * STDIN_WAIT_MS), with everything sent as its input, and its output comes back when it ends. With
 * `tty=true` the session is interactive, on a pseudo-terminal (exec_session_ws.ts: input as it is
 * typed, `tty_size` frames, output as it comes). Bad requests (unknown alloc or task, no command)
 * are refused before the upgrade with the HTTP status the other routes use.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { asBerthError, BerthError, validationError } from "../../structs/errors.js";
import type { Logger } from "../../internal/log.js";
import type { AllocOps } from "../rpc/alloc_ops.js";
import { runTtySession } from "./exec_session_ws.js";
import { statusOf } from "../wire/status_map.js";

const EXEC_PATH = /^\/v1\/client\/allocation\/([^/]+)\/exec$/;
/** Standard input a command may receive. */
const MAX_STDIN = 16 * 1024 * 1024;
/** How long the server waits for the client to close stdin before running with what it has. */
export const STDIN_WAIT_MS = 2_000;

export class ExecSockets {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_STDIN });

  constructor(
    private readonly ops: AllocOps,
    private readonly log: Logger,
    /** Throws when the caller's ACL token may not exec in the task (server/acl/exec.ts). */
    private readonly authorize: (req: IncomingMessage, allocId: string, task: string) => void = () =>
      undefined,
  ) {}

  /** Takes the upgrade when it is an exec request; false leaves it to the next handler. */
  handle(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const url = new URL(req.url ?? "/", "http://x");
    const m = EXEC_PATH.exec(url.pathname);
    if (!m) return false;
    let allocId: string;
    let task: string;
    let command: string[];
    let tty = false;
    try {
      allocId = decodeURIComponent(m[1]!);
      task = url.searchParams.get("task") ?? "";
      if (!task) throw validationError("task", "must name the task to run the command in");
      tty = url.searchParams.get("tty") === "true";
      command = parseCommand(url.searchParams.get("command"));
      this.authorize(req, allocId, task);
      this.ops.checkExec(allocId, task);
    } catch (err) {
      const e = asBerthError(err);
      const body = `${e.message}\n`;
      socket.end(
        `HTTP/1.1 ${statusOf(e.code)} Error\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `X-Berth-Error-Code: ${e.code}\r\nConnection: close\r\n\r\n${body}`,
      );
      return true;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) =>
      tty
        ? runTtySession(ws, this.ops, { allocId, task, command }, (w, err) => this.fail(w, err))
        : this.run(ws, allocId, task, command),
    );
    return true;
  }

  close(): void {
    this.wss.close();
  }

  private run(ws: WebSocket, allocId: string, task: string, command: string[]): void {
    const stdin: Buffer[] = [];
    let size = 0;
    let started = false;
    const start = () => {
      if (started) return;
      started = true;
      clearTimeout(timer);
      void this.execute(ws, allocId, task, command, Buffer.concat(stdin));
    };
    const timer = setTimeout(start, STDIN_WAIT_MS);
    ws.on("message", (raw: Buffer) => {
      if (started) return;
      let frame: { stdin?: { data?: string; close?: boolean } };
      try {
        frame = JSON.parse(raw.toString("utf8")) as typeof frame;
      } catch {
        return this.fail(ws, new BerthError("ERR_VALIDATION", "exec frames must be JSON"));
      }
      if (typeof frame.stdin?.data === "string") {
        const chunk = Buffer.from(frame.stdin.data, "base64");
        size += chunk.length;
        if (size > MAX_STDIN)
          return this.fail(ws, validationError("stdin", `is larger than ${MAX_STDIN} bytes`));
        stdin.push(chunk);
      }
      if (frame.stdin?.close === true) start();
    });
    ws.on("close", () => clearTimeout(timer));
  }

  private async execute(ws: WebSocket, allocId: string, task: string, command: string[], stdin: Buffer) {
    try {
      const res = await this.ops.exec(allocId, task, command, stdin);
      if (res.Stdout) ws.send(JSON.stringify({ stdout: { data: res.Stdout } }));
      if (res.Stderr) ws.send(JSON.stringify({ stderr: { data: res.Stderr } }));
      ws.send(JSON.stringify({ stdout: { close: true } }));
      ws.send(JSON.stringify({ stderr: { close: true } }));
      ws.send(JSON.stringify({ exited: true, result: { exit_code: res.ExitCode } }));
      ws.close(1000);
    } catch (err) {
      this.fail(ws, err);
    }
  }

  /** Nomad closes the socket with the error as the close reason (1011, or 1008 for bad input). */
  private fail(ws: WebSocket, err: unknown): void {
    const e = asBerthError(err);
    if (e.code === "ERR_INTERNAL") this.log.error("exec failed", { error: e.message });
    // A close reason is at most 123 bytes.
    ws.close(e.code === "ERR_VALIDATION" ? 1008 : 1011, Buffer.from(e.message).subarray(0, 123).toString());
  }
}

function parseCommand(raw: string | null): string[] {
  let v: unknown;
  try {
    v = JSON.parse(raw ?? "");
  } catch {
    throw validationError("command", 'must be a JSON list of strings, like ["/bin/sh", "-c", "id"]');
  }
  if (!Array.isArray(v) || v.length === 0 || v.some((s) => typeof s !== "string")) {
    throw validationError("command", "must be a non-empty JSON list of strings");
  }
  return v as string[];
}
