/** `berth acl policy apply|info|list|delete`: ACL policies (Nomad's `nomad acl policy ...`). */
import { attempt, fail, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import { json } from "../format.js";
import { fetchAndPrint, OUTPUT_FLAGS, outputArgs, type OutputArgs } from "../output_format.js";
import { group, sub } from "./acl_group.js";
import { policyLines, policyListLines } from "./acl_format.js";

interface ApplyArgs extends Parsed {
  name: string;
  file: string;
  description: string;
}

const apply: Command<ApplyArgs> = {
  usage: "Usage: berth acl policy apply [-description <text>] <name> <path|->",
  help: "Creates or replaces the ACL policy <name> with the rules in the file (HCL, Nomad's policy language; - reads standard input). Needs a management token.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, { description: { type: "string" } });
    expectArgs(positionals, 2, 2, "<name> and <path>");
    return {
      address: values.address,
      name: positionals[0]!,
      file: positionals[1]!,
      description: values.description ?? "",
    };
  },
  async run(p, io) {
    let rules: string;
    try {
      rules = await io.readFile(p.file);
    } catch (err) {
      return fail(io, `reading ${p.file === "-" ? "stdin" : `file ${p.file}`}`, err);
    }
    return attempt(io, "writing ACL policy", async () => {
      await io.api.acl.upsertPolicy({ Name: p.name, Description: p.description, Rules: rules });
      io.stdout(`Successfully wrote ${JSON.stringify(p.name)} ACL policy!`);
    });
  },
};

interface NameArgs extends Parsed {
  name: string;
  json: boolean;
}

function nameArgs(argv: string[]): NameArgs {
  const { values, positionals } = parseCommandArgs(argv, { json: { type: "boolean" } });
  expectArgs(positionals, 1, 1, "<name>");
  return { address: values.address, name: positionals[0]!, json: values.json ?? false };
}

const info: Command<NameArgs> = {
  usage: "Usage: berth acl policy info [-json] <name>",
  help: "Shows the ACL policy <name> with its rules.",
  parse: nameArgs,
  run: (p, io) =>
    attempt(io, "fetching info on ACL policy", async () => {
      const policy = await io.api.acl.policy(p.name);
      (p.json ? [json(policy)] : policyLines(policy)).forEach((l) => io.stdout(l));
    }),
};

const del: Command<NameArgs> = {
  usage: "Usage: berth acl policy delete <name>",
  help: "Deletes the ACL policy <name>. Needs a management token.",
  parse: nameArgs,
  run: (p, io) =>
    attempt(io, "deleting ACL policy", async () => {
      await io.api.acl.deletePolicy(p.name);
      io.stdout(`Successfully deleted ${p.name} policy!`);
    }),
};

type ListArgs = Parsed & OutputArgs;

const list: Command<ListArgs> = {
  usage: "Usage: berth acl policy list [-json] [-t <template>]",
  help: "Lists the ACL policies (a management token sees all, other tokens their own). -json prints the API's JSON, -t formats it with a Go template.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, OUTPUT_FLAGS);
    expectArgs(positionals, 0, 0, "none");
    return { address: values.address, ...outputArgs(values) };
  },
  run: (p, io) =>
    fetchAndPrint(io, p, "retrieving ACL policies", () => io.api.acl.policies(), policyListLines),
};

export const aclPolicy = group(
  "acl policy",
  "Manages ACL policies: apply (create or replace), info, list, delete.",
  { apply: sub(apply), info: sub(info), list: sub(list), delete: sub(del) },
);
