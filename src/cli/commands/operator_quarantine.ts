/**
 * `berth operator quarantine [list]` and `berth operator quarantine delete <table> <key>`: the
 * stored records the server could not load when it opened its state and moved aside, and dropping
 * one for good once the object was fixed and submitted again (or is not wanted).
 */
import type { QuarantinedRecord } from "../../api/index.js";
import { attempt, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { formatTimeNs } from "../format.js";
import { showList, type ListView, type StatusArgs } from "../status.js";

export type OperatorQuarantineArgs = Parsed &
  (
    | { verb: "list"; json: boolean }
    | { verb: "delete"; table: string; key: string; namespace: string | undefined }
  );

const LIST: ListView<QuarantinedRecord> = {
  doing: "querying quarantined records",
  fetch: (io) => io.api.operator.quarantine(),
  empty: "No quarantined records",
  columns: ["Table", "Namespace", "Key", "Quarantined", "Error"],
  row: (q) => [q.Table, q.Namespace || "-", q.Key, formatTimeNs(q.QuarantineTime), q.Error],
};

export const operatorQuarantine: Command<OperatorQuarantineArgs> = {
  usage: "Usage: berth operator quarantine [list | delete [-namespace <ns>] <table> <key>] [options]",
  help: 'Lists the stored records the server could not load when it started (moved aside so the server runs without them), with the reason each failed; -json prints the API\'s JSON. `delete <table> <key>` drops one for good (-namespace for jobs and volumes, default "default"). To keep a quarantined object, submit it again, fixed, through the usual command first.',
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      json: { type: "boolean" },
      namespace: { type: "string" },
    });
    const verb = positionals[0] ?? "list";
    if (verb === "list") {
      expectArgs(positionals, 0, 1, "[list]");
      return { address: values.address, verb, json: values.json ?? false };
    }
    if (verb === "delete") {
      expectArgs(positionals, 3, 3, "delete <table> <key>");
      return {
        address: values.address,
        verb,
        table: positionals[1]!,
        key: positionals[2]!,
        namespace: values.namespace,
      };
    }
    throw new UsageError(`unknown subcommand ${JSON.stringify(verb)} (want list or delete)`);
  },
  run(p, io) {
    if (p.verb === "list") {
      const args: StatusArgs = { address: p.address, id: undefined, json: p.json, verbose: false };
      return showList(LIST, args, io);
    }
    return attempt(io, "deleting quarantined record", async () => {
      await io.api.operator.deleteQuarantined(p.table, p.key, p.namespace);
      io.stdout(`Deleted quarantined ${p.table} record ${JSON.stringify(p.key)}`);
    });
  },
};
