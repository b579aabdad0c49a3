/**
 * The server → node calls of `alloc logs|exec|signal|restart|status -stats` (ClientAlloc.*): what they
 * need of an alloc running on the node. The interactive exec session's calls are in rpc_exec.ts.
 */

/** `Task` "" means every running task of the alloc. */
export interface AllocSignalRequest {
  AllocID: string;
  Task: string;
  /** A signal name ("SIGHUP"); validated by the server. */
  Signal: string;
}
export interface AllocRestartRequest {
  AllocID: string;
  /** "" with AllTasks false: the alloc's running tasks; with AllTasks: every task, also dead ones. */
  Task: string;
  AllTasks: boolean;
}
export interface AllocReadLogRequest {
  AllocID: string;
  Task: string;
  Type: "stdout" | "stderr";
  /**
   * Bytes from `Origin`, across the rotated files (`Origin` start: from the oldest kept file's
   * start; end: back from the newest file's end). With `Index`: bytes into that file.
   */
  Offset: number;
  Origin: "start" | "end";
  /** At most this many bytes are returned. */
  Limit: number;
  /**
   * Read file `<task>.<type>.<Index>` from `Offset` (Origin ignored): how a follow goes on where
   * the last read ended. A file rotated away since reads as the oldest kept one after it, from 0.
   * Absent: `Offset` counts from `Origin` across the files.
   */
  Index?: number;
}
export interface AllocReadLogResponse {
  /** Base64. */
  Data: string;
  /** Offset of the first byte of Data in file `Index`. */
  Offset: number;
  /** File `Index`'s size when read. */
  Size: number;
  /** The file read, `<task>.<type>.<Index>` (absent from nodes that predate rotation: 0). */
  Index?: number;
  /**
   * A later file existed before `Size` was read, so file `Index` is whole: once read to `Size`
   * the log goes on in file `Index + 1` (absent: false).
   */
  Next?: boolean;
  /** The task is dead: the file will not grow (follow ends). */
  TaskDead: boolean;
}
export interface AllocExecRequest {
  AllocID: string;
  Task: string;
  Command: string[];
  /** Base64 of the whole standard input (non-interactive exec). */
  Stdin: string;
  TimeoutMs: number;
}
export interface AllocExecResponse {
  /** Base64. */
  Stdout: string;
  Stderr: string;
  ExitCode: number;
}

/** `Task` "" means every task of the alloc that runs now. */
export interface AllocStatsRequest {
  AllocID: string;
  Task: string;
}
