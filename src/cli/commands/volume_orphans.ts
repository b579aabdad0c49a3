/**
 * `berth volume orphans [-plugin <id>]`: lists interrupted creates whose storage the plugin may hold
 * while no berth volume records it; `-adopt <volume>` completes one (its storage is recorded as the
 * volume), `-delete <volume>` deletes its storage through the plugin.
 */
import type { CSIVolumeOrphan } from "../../api/index.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { attempt, type Command, type Parsed } from "../command.js";
import { formatTimeNs, table } from "../format.js";

export interface VolumeOrphansArgs extends Parsed {
  plugin: string;
  adopt: string;
  delete: string;
  secrets: Record<string, string>;
}

export const volumeOrphans: Command<VolumeOrphansArgs> = {
  usage: "Usage: berth volume orphans [options]",
  help: "Lists volume creates that were interrupted (a crash or a lost answer between the plugin's CreateVolume and berth's record), whose storage the plugin may hold while no berth volume records it, with the storage the plugin lists that no berth volume records; the server also logs each one at start and every 5 minutes. -plugin <id> lists only that plugin's. -adopt <volume> completes the create: its storage is recorded as <volume>. -delete <volume> deletes its storage through the plugin (-secret key=value, repeatable, passes secrets to DeleteVolume).",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      plugin: { type: "string" },
      adopt: { type: "string" },
      delete: { type: "string" },
      secret: { type: "string", multiple: true },
    });
    expectArgs(positionals, 0, 0, "(none)");
    if (values.adopt !== undefined && values.delete !== undefined) {
      throw new UsageError("-adopt and -delete exclude each other");
    }
    const secrets: Record<string, string> = {};
    for (const s of values.secret ?? []) {
      const eq = s.indexOf("=");
      // Never echoes the argument: it is a secret.
      if (eq <= 0 || s.slice(0, eq).includes(",") || s.slice(eq + 1).includes(",")) {
        throw new UsageError("-secret must be key=value, with no comma in the key or the value");
      }
      secrets[s.slice(0, eq)] = s.slice(eq + 1);
    }
    return {
      address: values.address,
      plugin: values.plugin ?? "",
      adopt: values.adopt ?? "",
      delete: values.delete ?? "",
      secrets,
    };
  },
  run: (p, io) => {
    if (p.adopt !== "") {
      return attempt(io, "adopting orphaned volume", async () => {
        const [vol] = await io.api.volumes.adoptOrphan(p.adopt);
        io.stdout(
          `Adopted orphaned storage ${JSON.stringify(vol?.ExternalID ?? "")} as volume ${JSON.stringify(p.adopt)}`,
        );
      });
    }
    if (p.delete !== "") {
      return attempt(io, "deleting orphaned volume", async () => {
        await io.api.volumes.deleteOrphan(p.delete, { secrets: p.secrets });
        io.stdout(`Deleted the orphaned storage of volume ${JSON.stringify(p.delete)}`);
      });
    }
    return attempt(io, "listing orphaned volumes", async () => {
      const orphans = await io.api.volumes.listOrphans(p.plugin ? { pluginId: p.plugin } : {});
      if (orphans.length === 0) {
        io.stdout("No orphaned volumes");
        return;
      }
      io.stdout(orphanTable(orphans).join("\n"));
    });
  },
};

export function orphanTable(orphans: CSIVolumeOrphan[]): string[] {
  const rows = [["ID", "Namespace", "Name", "Plugin ID", "Create Time", "Unrecorded Storage"]];
  for (const o of orphans) {
    const storage =
      o.UnrecordedStorage === null
        ? `<unknown: ${o.ListError}>`
        : o.UnrecordedStorage.length === 0
          ? "<none>"
          : o.UnrecordedStorage.join(",");
    rows.push([o.ID, o.Namespace, o.Name, o.PluginID, formatTimeNs(o.CreateTime), storage]);
  }
  return table(rows);
}
