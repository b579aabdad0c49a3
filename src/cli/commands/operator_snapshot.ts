/**
 * `berth operator snapshot save|restore|inspect <file>` (Nomad's command/operator_snapshot_*.go):
 * save writes the cluster's state to a file (0600, through a temp file renamed into place, so an
 * interrupted save leaves no half file under the name), restore sends one to the leader, inspect
 * reads one offline and prints Nomad's fields (Created, ID, Size, Index, Term, Version) and the
 * count and size of each record type, largest first. What the file holds and what a restore does:
 * README "Back up and restore the state".
 */
import fs from "node:fs/promises";
import { readSnapshotHeader, type SnapshotFileHeader } from "../../api/snapshot_file.js";
import { attempt, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { bytes, json, kv, table } from "../format.js";
import type { CommandIO } from "../io.js";

type Verb = "save" | "restore" | "inspect";

export interface OperatorSnapshotArgs extends Parsed {
  verb: Verb;
  file: string;
  stale: boolean;
  json: boolean;
}

export const operatorSnapshot: Command<OperatorSnapshotArgs> = {
  usage: "Usage: berth operator snapshot <save [-stale] | restore | inspect [-json]> <file> [options]",
  help: "save writes a snapshot of the cluster's state (jobs, volumes and their claims, nodes, namespaces, ACL policies and tokens, with their indexes) to <file>; restore replaces the state of the cluster with a snapshot's (a management token; the leader answers); inspect prints what a snapshot file holds, offline. Volume secrets stay sealed in the file under the saving server's keyring key, which is not in it: copy that server's keystore key file into the restoring server's keystore directory before a restore.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      stale: { type: "boolean" },
      json: { type: "boolean" },
    });
    const verb = positionals[0];
    if (verb !== "save" && verb !== "restore" && verb !== "inspect") {
      throw new UsageError(
        `unknown subcommand ${JSON.stringify(verb ?? "")} (want save, restore or inspect)`,
      );
    }
    expectArgs(positionals, 2, 2, `${verb} <file>`);
    return {
      address: values.address,
      verb,
      file: positionals[1]!,
      stale: values.stale ?? false,
      json: values.json ?? false,
    };
  },
  run(p, io) {
    if (p.verb === "save") {
      return attempt(io, "saving snapshot", async () => {
        const { file } = await io.api.operator.snapshot({ stale: p.stale });
        await writeAtomically(p.file, file);
        io.stdout(`State file written to ${p.file}`);
      });
    }
    if (p.verb === "restore") {
      return attempt(io, "restoring snapshot", async () => {
        const file = await readBytes(io, p.file);
        await io.api.operator.snapshotRestore(file);
        io.stdout("Snapshot Restored");
      });
    }
    return attempt(io, "inspecting snapshot", async () => {
      const file = await readBytes(io, p.file);
      const header = readSnapshotHeader(file);
      if (p.json) io.stdout(json(header));
      else for (const line of inspectLines(header, file.length)) io.stdout(line);
    });
  },
};

/** Nomad's inspect: the snapshot's fields, a blank line, then Type / Count / Size and a total. */
export function inspectLines(h: SnapshotFileHeader, size: number): string[] {
  const head = kv([
    ["Created", h.CreatedAt],
    ["ID", h.ID],
    ["Size", bytes(size)],
    ["Index", String(h.Index)],
    ["Term", String(h.Term)],
    ["Version", String(h.Format)],
    ["Mode", h.Mode],
    ["Berth Version", h.BerthVersion],
    ["Sealed With", h.KeyIDs.length > 0 ? h.KeyIDs.join(", ") : "(no secrets)"],
  ]);
  const count = h.Types.reduce((n, t) => n + t.Count, 0);
  const total = h.Types.reduce((n, t) => n + t.Size, 0);
  const types = table([
    ["Type", "Count", "Size"],
    ...h.Types.map((t) => [t.Name, String(t.Count), bytes(t.Size)]),
    ["", "", ""],
    ["Total", String(count), bytes(total)],
  ]);
  return [...head, "", ...types];
}

function readBytes(io: CommandIO, file: string): Promise<Buffer> {
  return io.readFileBytes ? io.readFileBytes(file) : fs.readFile(file);
}

async function writeAtomically(file: string, data: Buffer): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    await fs.writeFile(tmp, data, { mode: 0o600 });
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}
