/**
 * `berth volume snapshot create|delete|list` (Nomad's `nomad volume snapshot ...`):
 *   create <volume> [<name>]       snapshots a volume through its controller plugin
 *   delete <plugin> <snapshot>     deletes a snapshot
 *   list [-plugin <plugin>]        lists snapshots, of one plugin or of every plugin that lists them
 * `-secret key=value` (repeatable) passes secrets to the plugin; `-parameter key=value` (create,
 * repeatable) passes CreateSnapshot parameters; `-per-page N` / `-page-token T` (list) show one
 * page and how to get the next, as Nomad's; `-verbose` shows longer volume IDs; `-json` prints the
 * API's JSON.
 */
import { hasErrorCode, type ApiErrorCode, type CSISnapshot } from "../../api/index.js";
import { attempt, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { bytes, json, table } from "../format.js";
import type { CommandIO } from "../io.js";
import { withProgress } from "../progress.js";

export interface SnapshotArgs extends Parsed {
  verb: "create" | "delete" | "list";
  args: string[];
  plugin: string | undefined;
  secrets: Record<string, string>;
  parameters: Record<string, string>;
  /** Set when -per-page or -page-token asks for one page. */
  page: { perPage: number; token: string } | undefined;
  verbose: boolean;
  json: boolean;
}

const VERBS = {
  create: { min: 1, max: 2, what: "<volume> [<name>]" },
  delete: { min: 2, max: 2, what: "<plugin> <snapshot>" },
  list: { min: 0, max: 0, what: "no arguments (use -plugin)" },
} as const;

/** `key=value` secrets; the message never echoes the argument (it is a secret). */
export function parseSecrets(list: string[] | undefined, flag = "-secret"): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of list ?? []) {
    const eq = s.indexOf("=");
    if (eq <= 0 || s.slice(0, eq).includes(",") || s.slice(eq + 1).includes(",")) {
      throw new UsageError(`${flag} must be key=value, with no comma in the key or the value`);
    }
    out[s.slice(0, eq)] = s.slice(eq + 1);
  }
  return out;
}

/** Nomad's table: the source volume's ID cut to 12 characters, 30 with -verbose. */
function snapshotTable(snaps: CSISnapshot[], verbose: boolean): string[] {
  return table([
    ["Snapshot ID", "Volume ID", "Size", "Create Time", "Ready?"],
    ...snaps.map((s) => [
      s.ID,
      s.ExternalSourceVolumeID.slice(0, verbose ? 30 : 12),
      bytes(s.SizeBytes),
      s.CreateTime ? new Date(s.CreateTime * 1000).toISOString().replace(/\.\d{3}Z$/, "Z") : "<none>",
      String(s.IsReady),
    ]),
  ]);
}

/** Every page of one plugin's snapshots. */
async function allSnapshots(
  io: CommandIO,
  plugin: string,
  secrets: Record<string, string>,
): Promise<CSISnapshot[]> {
  const out: CSISnapshot[] = [];
  let nextToken = "";
  do {
    const page = await io.api.volumes.listSnapshots(plugin, { nextToken, secrets });
    out.push(...(page.Snapshots ?? []));
    nextToken = page.NextToken ?? "";
  } while (nextToken !== "");
  return out;
}

/**
 * Error codes (the server's X-Berth-Error-Code) that mean "this plugin cannot list snapshots now":
 * it does not advertise LIST_SNAPSHOTS, its plugin answers UNIMPLEMENTED, or no healthy controller
 * instance of it is connected. Anything else is a real failure and ends the command.
 */
const CANNOT_LIST: readonly ApiErrorCode[] = [
  "ERR_CSI_NOT_SUPPORTED",
  "ERR_CSI_UNIMPLEMENTED",
  "ERR_CSI_PLUGIN_UNAVAILABLE",
  "ERR_NODE_NOT_CONNECTED",
];

/** What listing across plugins found: the snapshots, and why each plugin that could not list did not. */
export interface AcrossPlugins {
  snapshots: CSISnapshot[];
  /** How many plugins answered a list (even an empty one). */
  listed: number;
  /** `plugin "x": why`, one per plugin that could not list. */
  skipped: string[];
}

/** Without -plugin: every plugin with a healthy controller; one that cannot list is skipped, with its reason. */
export async function listAcrossPlugins(
  io: CommandIO,
  secrets: Record<string, string>,
): Promise<AcrossPlugins> {
  const found: AcrossPlugins = { snapshots: [], listed: 0, skipped: [] };
  for (const p of await io.api.plugins.list()) {
    if (p.ControllersHealthy === 0) {
      found.skipped.push(`plugin ${JSON.stringify(p.ID)}: no healthy controller`);
      continue;
    }
    try {
      found.snapshots.push(...(await allSnapshots(io, p.ID, secrets)));
      found.listed++;
    } catch (err) {
      if (!hasErrorCode(err, ...CANNOT_LIST)) throw err;
      found.skipped.push(`plugin ${JSON.stringify(p.ID)}: ${err.message}`);
    }
  }
  return found;
}

/** Why an empty answer is not "no snapshots": no plugin could be asked at all. */
function noPluginCanList(found: AcrossPlugins): Error {
  const why = found.skipped.length > 0 ? ` (${found.skipped.join("; ")})` : " (no CSI plugins)";
  return new Error(
    `no CSI plugin can list snapshots: none with a healthy controller advertises LIST_SNAPSHOTS${why}`,
  );
}

export const volumeSnapshot: Command<SnapshotArgs> = {
  usage: "Usage: berth volume snapshot <create|delete|list> [options] [args]",
  help: "create <volume> [<name>] snapshots a volume (-parameter key=value, repeatable, for the plugin); delete <plugin> <snapshot> deletes a snapshot; list [-plugin <plugin>] lists snapshots (-per-page N and -page-token T for one page). -secret key=value (repeatable) passes secrets to the plugin; -verbose shows longer volume IDs; -json prints the API's JSON.",
  parse(argv) {
    const [verb, ...rest] = argv;
    if (verb !== "create" && verb !== "delete" && verb !== "list") {
      throw new UsageError(
        `expected create, delete or list, got ${verb === undefined ? "nothing" : JSON.stringify(verb)}`,
      );
    }
    const { values, positionals } = parseCommandArgs(rest, {
      plugin: { type: "string" },
      secret: { type: "string", multiple: true },
      parameter: { type: "string", multiple: true },
      "per-page": { type: "string" },
      "page-token": { type: "string" },
      verbose: { type: "boolean" },
      json: { type: "boolean" },
    });
    const shape = VERBS[verb];
    expectArgs(positionals, shape.min, shape.max, shape.what);
    if (values.plugin !== undefined && verb !== "list") throw new UsageError("-plugin is only for list");
    if (values.parameter !== undefined && verb !== "create")
      throw new UsageError("-parameter is only for create");
    const paged = values["per-page"] !== undefined || values["page-token"] !== undefined;
    if (paged && (verb !== "list" || values.plugin === undefined)) {
      throw new UsageError("-per-page and -page-token are for list -plugin <plugin>");
    }
    const perPage = values["per-page"] === undefined ? 30 : Number(values["per-page"]);
    if (!Number.isInteger(perPage) || perPage < 1)
      throw new UsageError("-per-page must be a positive integer");
    return {
      address: values.address,
      verb,
      args: positionals,
      plugin: values.plugin,
      secrets: parseSecrets(values.secret),
      parameters: parseSecrets(values.parameter, "-parameter"),
      page: paged ? { perPage, token: values["page-token"] ?? "" } : undefined,
      verbose: values.verbose ?? false,
      json: values.json ?? false,
    };
  },
  run(p, io) {
    if (p.verb === "create") {
      return attempt(io, "creating snapshot", async () => {
        const [volume, name] = [p.args[0]!, p.args[1] ?? ""];
        const snaps = await withProgress(io, { what: `Snapshotting volume ${JSON.stringify(volume)}` }, () =>
          io.api.volumes.createSnapshot(volume, name, { secrets: p.secrets, parameters: p.parameters }),
        );
        if (p.json) return io.stdout(json(snaps));
        for (const s of snaps) io.stdout(`Completed snapshot of volume ${volume} with snapshot ID ${s.ID}.`);
        snapshotTable(snaps, p.verbose).forEach((l) => io.stdout(l));
      });
    }
    if (p.verb === "delete") {
      return attempt(io, "deleting snapshot", async () => {
        await io.api.volumes.deleteSnapshot(p.args[0]!, p.args[1]!, { secrets: p.secrets });
        io.stdout(`Deleted snapshot ${p.args[1]!}.`);
      });
    }
    if (p.page) return listOnePage(p, p.page, io);
    return attempt(io, "listing snapshots", async () => {
      let snaps: CSISnapshot[];
      if (p.plugin) snaps = await allSnapshots(io, p.plugin, p.secrets);
      else {
        const found = await listAcrossPlugins(io, p.secrets);
        if (found.listed === 0) throw noPluginCanList(found);
        snaps = found.snapshots;
      }
      if (p.json) return io.stdout(json(snaps));
      if (snaps.length === 0) return io.stdout("No snapshots found");
      snapshotTable(snaps, p.verbose).forEach((l) => io.stdout(l));
    });
  },
};

/** One page of one plugin's snapshots, and (as Nomad prints it) the command for the next page. */
function listOnePage(
  p: SnapshotArgs,
  page: { perPage: number; token: string },
  io: CommandIO,
): Promise<number> {
  return attempt(io, "listing snapshots", async () => {
    const res = await io.api.volumes.listSnapshots(p.plugin!, {
      perPage: page.perPage,
      nextToken: page.token,
      secrets: p.secrets,
    });
    const snaps = res.Snapshots ?? [];
    if (p.json) return io.stdout(json(res));
    if (snaps.length === 0) return io.stdout("No snapshots found");
    snapshotTable(snaps, p.verbose).forEach((l) => io.stdout(l));
    if (res.NextToken) {
      io.stdout("");
      io.stdout("Results have been paginated. To get the next page run:");
      io.stdout(
        `berth volume snapshot list -plugin ${p.plugin!} -per-page ${page.perPage} -page-token ${res.NextToken}`,
      );
    }
  });
}
