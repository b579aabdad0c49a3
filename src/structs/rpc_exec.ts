/**
 * The server → node calls of an interactive `alloc exec` session (Nomad's exec WebSocket carried
 * over the agent's own connection, which answers one request at a time): open a session, send it
 * input (stdin bytes, its end, a terminal size), poll its output, close it. The node keeps the
 * session; the server drives it from the WebSocket.
 */

export interface ExecOpenRequest {
  AllocID: string;
  Task: string;
  Command: string[];
  /** Run the command on a pseudo-terminal (stdout and stderr are then one stream, the terminal). */
  Tty: boolean;
  /** The terminal's size at start (Tty only; 0 leaves the default). */
  Height: number;
  Width: number;
}
export interface ExecOpenResponse {
  SessionID: string;
}
export interface ExecInputRequest {
  SessionID: string;
  /** Base64 of bytes for the command's standard input ("" for none). */
  Stdin: string;
  /** Standard input ends (after Stdin). */
  Close: boolean;
  /** A new terminal size when both are > 0 (Tty only). */
  Height: number;
  Width: number;
}
export interface ExecOutputRequest {
  SessionID: string;
  /** How long to wait for output when there is none yet. */
  WaitMs: number;
}
export interface ExecOutputResponse {
  /** Base64 of what the command wrote since the last poll. */
  Stdout: string;
  Stderr: string;
  /** The command ended and everything it wrote has been returned; the session is gone. */
  Exited: boolean;
  ExitCode: number;
}
export interface ExecCloseRequest {
  SessionID: string;
}
