/**
 * The two alloc routes whose answers are streams, not one JSON value: a task's log (Nomad's
 * `GET /v1/client/fs/logs/:id` with `plain=true`, followed as the task writes) and exec (Nomad's
 * WebSocket protocol at `/v1/client/allocation/:id/exec`).
 */
import type { IncomingMessage } from "node:http";
import { WebSocket } from "ws";
import type { ApiClient } from "./client.js";
import { ApiError, ConnectionError, ERROR_CODE_HEADER } from "./errors.js";
import { wsTlsOptions } from "./tls.js";
import { streamGet } from "./stream_get.js";

export interface LogQuery {
  task: string;
  type: "stdout" | "stderr";
  /** Keep the answer open and stream what the task writes until it is dead. */
  follow?: boolean;
  /** Bytes from `origin`. */
  offset?: number;
  origin?: "start" | "end";
  /**
   * berth's: a frame's File (`alloc/logs/<task>.<type>.<n>`, log_frames.ts); `offset` is then an
   * offset into that file, so a follow goes on exactly where a frame ended, across rotations.
   */
  file?: string;
  signal?: AbortSignal;
}

/** The log's bytes as the server sends them. */
export async function* streamLogs(api: ApiClient, allocId: string, q: LogQuery): AsyncGenerator<Uint8Array> {
  const { url, headers } = api.transport.endpoint(`/v1/client/fs/logs/${encodeURIComponent(allocId)}`, {
    task: q.task,
    type: q.type,
    plain: "true",
    follow: q.follow ? "true" : undefined,
    offset: q.offset === undefined ? undefined : String(q.offset),
    origin: q.origin,
    file: q.file,
  });
  yield* streamGet(api, { url, headers }, q.signal);
}

/**
 * The URL (ws:// or wss://, as the client's address is http:// or https://) and headers of an exec
 * session's WebSocket (Nomad's `/v1/client/allocation/:id/exec`).
 */
export function execSocket(
  api: ApiClient,
  allocId: string,
  q: { task: string; command: string[]; tty: boolean },
): { url: URL; headers: Record<string, string> } {
  const { url, headers } = api.transport.endpoint(
    `/v1/client/allocation/${encodeURIComponent(allocId)}/exec`,
    {
      task: q.task,
      command: JSON.stringify(q.command),
      tty: String(q.tty),
    },
  );
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return { url, headers };
}

/**
 * A refusal of the exec WebSocket before the upgrade (the server answered HTTP, not 101): rejects
 * with an ApiError carrying the answer's status, text and error code, as `request` would.
 */
export function refusal(res: IncomingMessage, reject: (err: ApiError) => void): void {
  const chunks: Buffer[] = [];
  res.on("data", (c: Buffer) => chunks.push(c));
  res.on("end", () => {
    const code = res.headers[ERROR_CODE_HEADER.toLowerCase()];
    const text = Buffer.concat(chunks).toString("utf8").trim();
    reject(new ApiError(res.statusCode ?? 500, text, typeof code === "string" ? code : undefined));
  });
}

export interface ExecResult {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
}

/**
 * Runs `command` in the task non-interactively: sends `stdin` whole, then closes it; resolves
 * with the output and exit code. A refusal before the upgrade is an ApiError; a failure after it
 * (the socket closed with a reason) rejects with that reason.
 */
export function execInAlloc(
  api: ApiClient,
  allocId: string,
  task: string,
  command: string[],
  stdin: Buffer,
): Promise<ExecResult> {
  const { url, headers } = execSocket(api, allocId, { task, command, tty: false });
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, {
      headers,
      ...(url.protocol === "wss:" ? wsTlsOptions(api.transport.tlsConnectOptions()) : {}),
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let exitCode: number | null = null;
    ws.on("unexpected-response", (_req, res) => refusal(res, reject));
    ws.on("open", () => {
      if (stdin.length > 0) ws.send(JSON.stringify({ stdin: { data: stdin.toString("base64") } }));
      ws.send(JSON.stringify({ stdin: { close: true } }));
    });
    ws.on("message", (raw: Buffer) => {
      const frame = JSON.parse(raw.toString("utf8")) as {
        stdout?: { data?: string };
        stderr?: { data?: string };
        exited?: boolean;
        result?: { exit_code: number };
      };
      if (frame.stdout?.data) out.push(Buffer.from(frame.stdout.data, "base64"));
      if (frame.stderr?.data) err.push(Buffer.from(frame.stderr.data, "base64"));
      if (frame.exited) exitCode = frame.result?.exit_code ?? 0;
    });
    ws.on("close", (_code, reason) => {
      if (exitCode === null)
        return reject(new Error(reason.toString() || "exec session closed before the command ended"));
      resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err), exitCode });
    });
    ws.on("error", (e) => reject(new ConnectionError(api.address, e)));
  });
}
