/**
 * `berth namespace apply [-description D] [-quota Q] [-json] <input>`: creates or updates a
 * namespace, as Nomad's command/namespace_apply.go. <input> is a spec file (HCL, or JSON with
 * -json; `-` reads stdin) when such a file exists, and otherwise the namespace's name: then the
 * stored namespace (if any) is updated with just the flags given, or a new one is created.
 */
import { hasErrorCode, type Namespace, type NamespaceSpec } from "../../api/index.js";
import { attempt, fail, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import type { CommandIO } from "../io.js";
import { parseNamespaceHcl } from "./namespace_spec.js";

export interface NamespaceApplyArgs extends Parsed {
  input: string;
  description: string | undefined;
  quota: string | undefined;
  json: boolean;
}

/** The file's text, or undefined when <input> names no file (so it is a namespace name). */
async function readSpecFile(io: CommandIO, input: string): Promise<string | undefined> {
  try {
    return await io.readFile(input);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (input !== "-" && (code === "ENOENT" || code === "EISDIR" || code === "ENOTDIR")) return undefined;
    throw err;
  }
}

function parseJsonSpec(file: string, text: string): NamespaceSpec {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new Error(`${file}: must be a JSON object`);
  return v as NamespaceSpec;
}

/** The namespace <name> names now, or a fresh one; flags set only what they name. */
async function fromName(io: CommandIO, p: NamespaceApplyArgs): Promise<NamespaceSpec> {
  let stored: Namespace | undefined;
  try {
    stored = await io.api.namespaces.info(p.input);
  } catch (err) {
    if (!hasErrorCode(err, "ERR_NOT_FOUND")) throw err;
  }
  const ns: NamespaceSpec = stored ? { ...stored } : { Name: p.input };
  if (p.description !== undefined) ns.Description = p.description;
  if (p.quota !== undefined) ns.Quota = p.quota;
  return ns;
}

export const namespaceApply: Command<NamespaceApplyArgs> = {
  usage: "Usage: berth namespace apply [options] <input>",
  help: "Creates or updates a namespace. <input> is a namespace specification file (HCL: name, description, meta {}, capabilities { enabled_task_drivers, disabled_task_drivers }; JSON with -json; - reads stdin), or, when no such file exists, the name of the namespace to create or update with -description and -quota.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      description: { type: "string" },
      quota: { type: "string" },
      json: { type: "boolean" },
    });
    expectArgs(positionals, 1, 1, "<input>");
    return {
      address: values.address,
      input: positionals[0]!,
      description: values.description,
      quota: values.quota,
      json: values.json ?? false,
    };
  },
  async run(p, io) {
    let ns: NamespaceSpec;
    try {
      const text = await readSpecFile(io, p.input);
      if (text === undefined) {
        ns = await fromName(io, p);
      } else {
        if (p.description !== undefined || p.quota !== undefined)
          io.stderr("Flags are ignored when a file is specified!");
        ns = p.json
          ? parseJsonSpec(p.input, text)
          : parseNamespaceHcl(p.input, text, (m) => io.stderr(`Warning: ${m}`));
      }
    } catch (err) {
      return fail(io, "reading namespace specification", err);
    }
    return attempt(io, "applying namespace", async () => {
      await io.api.namespaces.register(ns);
      io.stdout(`Successfully applied namespace ${JSON.stringify(ns.Name)}!`);
    });
  },
};
