/**
 * `berth node intro create [-node-name NAME] [-node-pool default] [-ttl DUR] [-json|-t TEMPLATE]` (Nomad 1.11's
 * `node intro create`): a node introduction token a new node agent registers with
 * (`-client-intro-token`, NOMAD_CLIENT_INTRO_TOKEN or DATA_DIR/client/intro_token.jwt). Needs
 * `node:write`. The token is printed once and kept nowhere: treat it as a secret.
 */
import { parseDuration } from "../../api/index.js";
import type { Command, Parsed } from "../command.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { fetchAndPrint, OUTPUT_FLAGS, outputArgs, type OutputArgs } from "../output_format.js";

export interface NodeIntroCreateArgs extends Parsed, OutputArgs {
  nodeName: string;
  nodePool: string;
  /** Nanoseconds; 0: the server's default_identity_ttl. */
  ttlNs: number;
}

export const nodeIntroCreate: Command<NodeIntroCreateArgs> = {
  usage: "Usage: berth node intro create [options]",
  help: 'Generates a node introduction token, which a new node agent presents on its first registration (-client-intro-token, NOMAD_CLIENT_INTRO_TOKEN, or DATA_DIR/client/intro_token.jwt). A server with client_introduction { enforcement = "strict" } refuses node IDs it has never seen that bring no valid token. -node-name scopes the token to one node name (recommended); -node-pool is accepted for Nomad compatibility (berth has only "default"); -ttl sets its lifetime (default: the server\'s default_identity_ttl, 5m; at most its max_identity_ttl, 30m). Needs a token with node:write. -json prints the API\'s answer, -t formats it with a Go template. The token is shown once: keep it secret.',
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      "node-name": { type: "string" },
      "node-pool": { type: "string" },
      ttl: { type: "string" },
      ...OUTPUT_FLAGS,
    });
    if (positionals[0] !== "create") throw new UsageError('the subcommand is "node intro create"');
    expectArgs(positionals.slice(1), 0, 0, "no arguments");
    let ttlNs = 0;
    if (values.ttl !== undefined) {
      const d = parseDuration(values.ttl);
      if (d === undefined || d <= 0)
        throw new UsageError(
          `-ttl must be a positive duration (like 15m), got ${JSON.stringify(values.ttl)}`,
        );
      ttlNs = d;
    }
    return {
      address: values.address,
      nodeName: values["node-name"] ?? "",
      nodePool: values["node-pool"] ?? "default",
      ttlNs,
      ...outputArgs(values),
    };
  },
  run: (p, io) =>
    fetchAndPrint(
      io,
      p,
      "creating a node introduction token",
      () =>
        io.api.acl.createClientIntroductionToken({
          NodeName: p.nodeName,
          NodePool: p.nodePool,
          TTL: p.ttlNs,
        }),
      (res) => [`Successfully generated client introduction token:\n\n${res.JWT}`],
    ),
};
