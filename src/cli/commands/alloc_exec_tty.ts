/**
 * `alloc exec -t`: the interactive session on the local terminal. Standard input goes to the
 * command as it is typed, with the terminal in raw mode (keys such as Ctrl-C reach the remote
 * terminal instead of ending berth), and is restored however the session ends; the window size is
 * sent at start and on every change; the remote terminal's output is written unchanged (it is a
 * terminal session: its escapes are the point), as Nomad's CLI does.
 */
import { openTtySession } from "../../api/exec_session.js";
import type { CommandIO } from "../io.js";

export async function runTtyExec(
  io: CommandIO,
  allocId: string,
  task: string,
  command: string[],
): Promise<number> {
  const term = io.terminal;
  if (!term?.stdin.isTTY || !term.stdout.isTTY) {
    throw new Error("-t needs a terminal on standard input and output; use -t=false");
  }
  const size = () =>
    term.stdout.columns && term.stdout.rows
      ? { height: term.stdout.rows, width: term.stdout.columns }
      : undefined;
  const initial = size();
  const session = openTtySession(io.api, allocId, task, command, {
    size: initial,
    onStdout: (d) => term.stdout.write(d),
    onStderr: (d) => term.stderr.write(d),
  });
  const onData = (d: Buffer) => session.write(d);
  const onEnd = () => session.closeStdin();
  const onResize = () => {
    const s = size();
    if (s) session.resize(s.height, s.width);
  };
  term.stdin.setRawMode?.(true);
  term.stdin.on("data", onData);
  term.stdin.on("end", onEnd);
  term.stdout.on("resize", onResize);
  term.stdin.resume();
  try {
    return await session.done;
  } finally {
    term.stdout.off("resize", onResize);
    term.stdin.off("data", onData);
    term.stdin.off("end", onEnd);
    term.stdin.setRawMode?.(false);
    term.stdin.pause();
  }
}
