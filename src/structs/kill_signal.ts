/**
 * Task.KillSignal: the signal a task is sent first when it is stopped (SIGKILL follows after its
 * kill_timeout). Nomad takes the signal's name ("SIGINT", "SIGHUP", …); an empty or absent value
 * means SIGTERM. Shared by the job validator (structs) and the process drivers (client).
 */

/** The default when a task sets no kill_signal. */
export const DEFAULT_KILL_SIGNAL = "SIGTERM";

/**
 * The names berth accepts, each a Linux signal that ends a process unless it handles it. Signals
 * that stop or are ignored by default (SIGSTOP, SIGCHLD, SIGWINCH, …) would leave the task running
 * until the kill timeout and are refused, as are real-time signals (no portable name).
 */
export const KILL_SIGNALS = [
  "SIGHUP",
  "SIGINT",
  "SIGQUIT",
  "SIGABRT",
  "SIGKILL",
  "SIGUSR1",
  "SIGUSR2",
  "SIGPIPE",
  "SIGALRM",
  "SIGTERM",
] as const;

export type KillSignal = (typeof KILL_SIGNALS)[number];

/**
 * The signal named by `value` ("" or undefined: SIGTERM). Names are matched case-insensitively
 * and may omit the "SIG" prefix ("int" → SIGINT). Throws an Error naming the value and the accepted
 * names when it is not one of KILL_SIGNALS.
 */
export function parseKillSignal(value: string | undefined | null): KillSignal {
  if (value === undefined || value === null || value === "") return DEFAULT_KILL_SIGNAL;
  const upper = value.trim().toUpperCase();
  const name = upper.startsWith("SIG") ? upper : `SIG${upper}`;
  const found = KILL_SIGNALS.find((s) => s === name);
  if (found === undefined) {
    throw new Error(
      `unknown kill signal ${JSON.stringify(value)}; expected one of ${KILL_SIGNALS.join(", ")}`,
    );
  }
  return found;
}
