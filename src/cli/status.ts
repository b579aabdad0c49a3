/**
 * What the read commands share: `<noun> status [options] [<id>]` lists everything or shows one,
 * `-json` prints the API's JSON instead of text, `-t` a Go template over that JSON
 * (output_format.ts), and a failed query is one stderr line and exit 1.
 */
import type { Command, Parsed } from "./command.js";
import { expectArgs, parseCommandArgs, UsageError } from "./flags.js";
import { table } from "./format.js";
import type { CommandIO } from "./io.js";
import { fetchAndPrint, OUTPUT_FLAGS, type OutputArgs } from "./output_format.js";

export interface StatusArgs extends Parsed, OutputArgs {
  id: string | undefined;
  verbose: boolean;
}

/** The flags every read command takes: `-json`, `-t`, `-verbose`. */
export const READ_FLAGS = { ...OUTPUT_FLAGS, verbose: { type: "boolean" } } as const;
const CSI_READ = { ...READ_FLAGS, type: { type: "string" } } as const;

/** `-json`, `-t`, `-verbose` (and `-type csi` when `csi`), with `min` to one positional named by `what`. */
export function parseStatusArgs(argv: string[], min: 0 | 1, what: string, csi = false): StatusArgs {
  const { values, positionals } = csi ? parseCommandArgs(argv, CSI_READ) : parseCommandArgs(argv, READ_FLAGS);
  expectArgs(positionals, min, 1, what);
  const type = "type" in values ? values.type : undefined;
  if (type !== undefined && type !== "csi") {
    throw new UsageError(`-type must be "csi", got ${JSON.stringify(type)}`);
  }
  return {
    address: values.address,
    id: positionals[0],
    json: values.json ?? false,
    template: values.t,
    verbose: values.verbose ?? false,
  };
}

/** How a list is fetched and shown as a table. */
export interface ListView<T> {
  /** For `Error <doing>: <why>`. */
  doing: string;
  fetch(io: CommandIO): Promise<T[]>;
  /** The one line printed when there is nothing. */
  empty: string;
  /** A line printed above the table. */
  heading?: string;
  columns: string[];
  row(item: T, p: StatusArgs): string[];
}

/** How one object is fetched and shown. */
/** `A`: the command's arguments, for commands with flags of their own (`alloc status -stats`). */
export interface OneView<T, A extends StatusArgs = StatusArgs> {
  doing: string;
  fetch(id: string, io: CommandIO): Promise<T>;
  render(value: T, p: A, io: CommandIO): string[] | Promise<string[]>;
  /** What -json prints (and -t sees); the fetched value unless given. */
  json?(value: T): unknown;
}

export function showList<T>(view: ListView<T>, p: StatusArgs, io: CommandIO): Promise<number> {
  return fetchAndPrint(
    io,
    p,
    view.doing,
    () => view.fetch(io),
    (items) => {
      if (items.length === 0) return [view.empty];
      const lines = table([view.columns, ...items.map((item) => view.row(item, p))]);
      return view.heading === undefined ? lines : [view.heading, ...lines];
    },
  );
}

export function showOne<T, A extends StatusArgs>(
  view: OneView<T, A>,
  id: string,
  p: A,
  io: CommandIO,
): Promise<number> {
  const asJson = (v: T) => (view.json ? view.json(v) : v);
  return fetchAndPrint(
    io,
    p,
    view.doing,
    () => view.fetch(id, io),
    (v) => view.render(v, p, io),
    asJson,
  );
}

export interface StatusSpec<L, O> {
  usage: string;
  help: string;
  /** The optional positional as the usage names it: `[<job>]`. */
  what: string;
  /** Accepts `-type csi`, as Nomad's volume and plugin status do. */
  csi?: boolean;
  list: ListView<L>;
  one: OneView<O>;
}

/** A `status [<id>]` command: the list without an ID, the one object with it. */
export function statusCommand<L, O>(spec: StatusSpec<L, O>): Command<StatusArgs> {
  return {
    usage: spec.usage,
    help: spec.help,
    parse: (argv) => parseStatusArgs(argv, 0, spec.what, spec.csi),
    run: (p, io) => (p.id === undefined ? showList(spec.list, p, io) : showOne(spec.one, p.id, p, io)),
  };
}
