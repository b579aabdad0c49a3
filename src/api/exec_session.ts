/**
 * An interactive exec session on a pseudo-terminal (Nomad's exec WebSocket with `tty=true`): what
 * the user types goes out as `stdin` frames as it comes, the terminal's size as `tty_size` frames
 * (the first one before anything else, so the command starts with it), and the terminal's output
 * comes back as it is written. `done` resolves with the command's exit code.
 */
import { WebSocket } from "ws";
import { execSocket, refusal } from "./alloc_stream.js";
import type { ApiClient } from "./client.js";
import { ConnectionError } from "./errors.js";
import { wsTlsOptions } from "./tls.js";

export interface TtySessionOptions {
  /** The terminal's size at start; omitted: the node's default. */
  size?: { height: number; width: number };
  onStdout(data: Buffer): void;
  onStderr(data: Buffer): void;
}

export interface TtySession {
  write(data: Buffer): void;
  /** The end of input (the terminal reads EOF). */
  closeStdin(): void;
  resize(height: number, width: number): void;
  /** The command's exit code; rejects when the session fails (the reason the server gave). */
  done: Promise<number>;
  /** Ends the session now (the command is killed on the node). */
  close(): void;
}

export function openTtySession(
  api: ApiClient,
  allocId: string,
  task: string,
  command: string[],
  opts: TtySessionOptions,
): TtySession {
  const { url, headers } = execSocket(api, allocId, { task, command, tty: true });
  // wss: the client's TLS settings (its CA, its certificate), as every other request of it.
  const tls = url.protocol === "wss:" ? wsTlsOptions(api.transport.tlsConnectOptions()) : {};
  const ws = new WebSocket(url, { headers, ...tls });
  const queue: string[] = [];
  const frame = (f: object) => {
    const text = JSON.stringify(f);
    if (ws.readyState === WebSocket.OPEN) ws.send(text);
    else if (ws.readyState === WebSocket.CONNECTING) queue.push(text);
  };
  if (opts.size) frame({ tty_size: opts.size });
  const done = new Promise<number>((resolve, reject) => {
    let exitCode: number | null = null;
    ws.on("unexpected-response", (_req, res) => refusal(res, reject));
    ws.on("open", () => {
      for (const text of queue.splice(0)) ws.send(text);
    });
    ws.on("message", (raw: Buffer) => {
      const f = JSON.parse(raw.toString("utf8")) as {
        stdout?: { data?: string };
        stderr?: { data?: string };
        exited?: boolean;
        result?: { exit_code: number };
      };
      if (f.stdout?.data) opts.onStdout(Buffer.from(f.stdout.data, "base64"));
      if (f.stderr?.data) opts.onStderr(Buffer.from(f.stderr.data, "base64"));
      if (f.exited) exitCode = f.result?.exit_code ?? 0;
    });
    ws.on("close", (_code, reason) => {
      if (exitCode === null)
        return reject(new Error(reason.toString() || "exec session closed before the command ended"));
      resolve(exitCode);
    });
    ws.on("error", (e) => reject(new ConnectionError(api.address, e)));
  });
  return {
    write: (data) => frame({ stdin: { data: data.toString("base64") } }),
    closeStdin: () => frame({ stdin: { close: true } }),
    resize: (height, width) => frame({ tty_size: { height, width } }),
    done,
    close: () => ws.close(1000),
  };
}
