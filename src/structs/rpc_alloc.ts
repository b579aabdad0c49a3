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
  /** Bytes from `Origin`. */
  Offset: number;
  Origin: "start" | "end";
  /** At most this many bytes are returned. */
  Limit: number;
}
export interface AllocReadLogResponse {
  /** Base64. */
  Data: string;
  /** Absolute offset of the first byte of Data in the file. */
  Offset: number;
  /** The file's size when read. */
  Size: number;
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
