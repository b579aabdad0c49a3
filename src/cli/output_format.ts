/**
 * Nomad's machine-readable output flags on the read commands: `-json` prints the API's JSON and
 * `-t <template>` runs a Go text/template over the same value (gotemplate/). Both at once is
 * refused with Nomad's text; a template that does not parse or fails is `Error formatting the data:
 * template: …` on stderr, and the command's error exit code (1; `job plan`: 255).
 *
 * Why a Go template engine of our own: `-t` templates are written for Nomad, so they must mean what
 * Go's text/template makes them mean (field chains, `range $i, $a := …`, `<no value>`, printf's
 * verbs, Go's error texts); the npm template engines (Handlebars, Mustache, EJS) speak other
 * languages and the few Go-syntax look-alikes differ in exactly those semantics.
 */
import { fail } from "./command.js";
import { json } from "./format.js";
import { render } from "./gotemplate/exec.js";
import type { CommandIO } from "./io.js";

/** The flags, for a command's parseCommandArgs options. */
export const OUTPUT_FLAGS = { json: { type: "boolean" }, t: { type: "string" } } as const;

export interface OutputArgs {
  /** `-json`. */
  json: boolean;
  /** `-t`: a Go text/template; absent (or empty, as in Nomad) when not given. */
  template?: string | undefined;
}

export function outputArgs(values: { json?: boolean | undefined; t?: string | undefined }): OutputArgs {
  return { json: values.json ?? false, template: values.t };
}

/** True when the command prints data for a machine (`-json` or a non-empty `-t`), not its text. */
export function formatted(p: OutputArgs): boolean {
  return p.json || (p.template ?? "") !== "";
}

/**
 * Nomad's refusal of `-json` with `-t`, checked before any request so nothing is fetched in vain:
 * prints it and returns `code`; undefined when the flags are fine.
 */
export function refuseBoth(io: CommandIO, p: OutputArgs, code = 1): number | undefined {
  if (!p.json || (p.template ?? "") === "") return undefined;
  io.stderr("Both json and template formatting are not allowed");
  return code;
}

/** `data` as -json or -t asks (call when formatted(p)); 0, or `code` after the one error line. */
export function printFormatted(io: CommandIO, p: OutputArgs, data: unknown, code = 1): number {
  const refused = refuseBoth(io, p, code);
  if (refused !== undefined) return refused;
  if (p.json) {
    io.stdout(json(data));
    return 0;
  }
  let text: string;
  try {
    text = render(p.template ?? "", data);
  } catch (err) {
    fail(io, "formatting the data", err);
    return code;
  }
  io.stdout(text);
  return 0;
}

/**
 * For a command that has fetched `data`: when -json or -t was given, prints it so and returns the
 * exit code; undefined when neither was (the command prints its own text).
 */
export function maybeFormatted(io: CommandIO, p: OutputArgs, data: unknown, code = 1): number | undefined {
  return formatted(p) ? printFormatted(io, p, data, code) : undefined;
}

/**
 * A read step and its output: `fetch` (a failure is `Error <doing>: <why>`, exit 1), then its value
 * as -json or -t asks, or else as `lines` lays it out. `-json` with `-t` is refused before fetching.
 */
export async function fetchAndPrint<T>(
  io: CommandIO,
  p: OutputArgs,
  doing: string,
  fetch: () => Promise<T>,
  lines: (value: T) => string[] | Promise<string[]>,
  /** What -json prints and -t sees; the fetched value unless given. */
  asData: (value: T) => unknown = (value) => value,
): Promise<number> {
  const refused = refuseBoth(io, p);
  if (refused !== undefined) return refused;
  let value: T;
  try {
    value = await fetch();
  } catch (err) {
    return fail(io, doing, err);
  }
  const done = maybeFormatted(io, p, asData(value));
  if (done !== undefined) return done;
  (await lines(value)).forEach((l) => io.stdout(l));
  return 0;
}
