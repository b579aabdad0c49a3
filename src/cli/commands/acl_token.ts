/**
 * `berth acl token create|update|info|list|self|delete` and `berth acl bootstrap` (Nomad's
 * `nomad acl token ...`). A token's secret is printed once, by the command that creates it.
 */
import type { ACLTokenRequest } from "../../api/index.js";
import { attempt, fail, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import { describeError, json } from "../format.js";
import { fetchAndPrint, OUTPUT_FLAGS, outputArgs, type OutputArgs } from "../output_format.js";
import { group, sub } from "./acl_group.js";
import { tokenLines, tokenListLines } from "./acl_format.js";

interface JsonArgs extends Parsed {
  json: boolean;
}

function noArgs(argv: string[]): JsonArgs {
  const { values, positionals } = parseCommandArgs(argv, { json: { type: "boolean" } });
  expectArgs(positionals, 0, 0, "none");
  return { address: values.address, json: values.json ?? false };
}

interface BootstrapArgs extends Parsed, OutputArgs {
  /** A file holding the secret to give the bootstrap token ("-": stdin); none: the server picks. */
  secretFile: string | undefined;
}

export const aclBootstrap: Command<BootstrapArgs> = {
  usage: "Usage: berth acl bootstrap [-json] [-t <template>] [<path>]",
  help: "Bootstraps the ACL system once: creates and prints the first management token. Keep its Secret ID: it is shown only now. <path> (- for standard input) holds a UUID to use as that secret, as Nomad's.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, OUTPUT_FLAGS);
    expectArgs(positionals, 0, 1, "[<path>]");
    return { address: values.address, ...outputArgs(values), secretFile: positionals[0] };
  },
  async run(p, io) {
    let secret: string | undefined;
    if (p.secretFile !== undefined) {
      try {
        secret = (await io.readFile(p.secretFile)).trim();
      } catch (err) {
        return fail(io, "reading provided token", err);
      }
    }
    return fetchAndPrint(io, p, "bootstrapping", () => io.api.acl.bootstrap(secret), tokenLines);
  },
};

interface TokenArgs extends Parsed, OutputArgs {
  name: string | undefined;
  type: string | undefined;
  policies: string[];
  global: boolean;
  ttl: string | undefined;
  accessor: string;
}

const TOKEN_FLAGS = {
  ...OUTPUT_FLAGS,
  name: { type: "string" },
  type: { type: "string" },
  policy: { type: "string", multiple: true },
  global: { type: "boolean" },
  ttl: { type: "string" },
} as const;

function tokenArgs(argv: string[], accessor: boolean): TokenArgs {
  const { values, positionals } = parseCommandArgs(argv, TOKEN_FLAGS);
  expectArgs(positionals, accessor ? 1 : 0, accessor ? 1 : 0, accessor ? "<token_accessor_id>" : "none");
  return {
    address: values.address,
    ...outputArgs(values),
    name: values.name,
    type: values.type,
    policies: values.policy ?? [],
    global: values.global ?? false,
    ttl: values.ttl,
    accessor: positionals[0] ?? "",
  };
}

const create: Command<TokenArgs> = {
  usage:
    "Usage: berth acl token create [-name <name>] [-type client|management] [-policy <name>]... [-global] [-ttl <duration>] [-json] [-t <template>]",
  help: "Creates an ACL token (type client by default, with the policies named by -policy) and prints it with its Secret ID, shown only now. Needs a management token.",
  parse: (argv) => tokenArgs(argv, false),
  run: (p, io) =>
    fetchAndPrint(
      io,
      p,
      "creating token",
      async () => {
        const req: ACLTokenRequest = {
          Name: p.name ?? "",
          Type: p.type ?? "client",
          Policies: p.policies,
          Global: p.global,
          ExpirationTTL: p.ttl || undefined,
        };
        // As Nomad's CLI: a policy that does not exist (yet) is only a warning.
        for (const policy of p.policies) {
          await io.api.acl.policy(policy).catch((err: unknown) => {
            io.stderr(`Error fetching info on ${policy} policy: ${describeError(err)}`);
          });
        }
        return io.api.acl.createToken(req);
      },
      tokenLines,
    ),
};

const update: Command<TokenArgs> = {
  usage:
    "Usage: berth acl token update [-name <name>] [-type client|management] [-policy <name>]... <token_accessor_id>",
  help: "Updates an ACL token's name, type or policies (the flags given replace those values). Needs a management token.",
  parse: (argv) => tokenArgs(argv, true),
  run: (p, io) =>
    attempt(io, "updating token", async () => {
      const cur = await io.api.acl.token(p.accessor);
      const token = await io.api.acl.updateToken({
        AccessorID: cur.AccessorID,
        Name: p.name ?? cur.Name,
        Type: p.type ?? cur.Type,
        Policies: p.policies.length > 0 ? p.policies : (cur.Policies ?? []),
        Global: cur.Global,
      });
      (p.json ? [json(token)] : tokenLines(token)).forEach((l) => io.stdout(l));
    }),
};

interface AccessorArgs extends Parsed {
  accessor: string;
  json: boolean;
}

function accessorArgs(argv: string[]): AccessorArgs {
  const { values, positionals } = parseCommandArgs(argv, { json: { type: "boolean" } });
  expectArgs(positionals, 1, 1, "<token_accessor_id>");
  return { address: values.address, accessor: positionals[0]!, json: values.json ?? false };
}

const info: Command<AccessorArgs> = {
  usage: "Usage: berth acl token info [-json] <token_accessor_id>",
  help: "Shows an ACL token (a management token may read any, other tokens themselves). The Secret ID is not shown: berth keeps only its hash.",
  parse: accessorArgs,
  run: (p, io) =>
    attempt(io, "fetching token", async () => {
      const token = await io.api.acl.token(p.accessor);
      (p.json ? [json(token)] : tokenLines(token)).forEach((l) => io.stdout(l));
    }),
};

const del: Command<AccessorArgs> = {
  usage: "Usage: berth acl token delete <token_accessor_id>",
  help: "Deletes an ACL token; requests with its secret are refused from then on. Needs a management token.",
  parse: accessorArgs,
  run: (p, io) =>
    attempt(io, "deleting token", async () => {
      await io.api.acl.deleteToken(p.accessor);
      io.stdout(`Token ${p.accessor} successfully deleted`);
    }),
};

const self: Command<JsonArgs> = {
  usage: "Usage: berth acl token self [-json]",
  help: "Shows the token the command runs with (-token, BERTH_TOKEN or NOMAD_TOKEN).",
  parse: noArgs,
  run: (p, io) =>
    attempt(io, "fetching self token", async () => {
      const token = await io.api.acl.tokenSelf();
      (p.json ? [json(token)] : tokenLines(token)).forEach((l) => io.stdout(l));
    }),
};

const list: Command<Parsed & OutputArgs> = {
  usage: "Usage: berth acl token list [-json] [-t <template>]",
  help: "Lists the ACL tokens. Needs a management token. -json prints the API's JSON, -t formats it with a Go template.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, OUTPUT_FLAGS);
    expectArgs(positionals, 0, 0, "none");
    return { address: values.address, ...outputArgs(values) };
  },
  run: (p, io) =>
    fetchAndPrint(
      io,
      p,
      "retrieving ACL tokens",
      () => io.api.acl.tokens(),
      (t) => tokenListLines(t, io.now()),
    ),
};

export const aclToken = group("acl token", "Manages ACL tokens: create, update, info, list, self, delete.", {
  create: sub(create),
  update: sub(update),
  info: sub(info),
  list: sub(list),
  self: sub(self),
  delete: sub(del),
});
