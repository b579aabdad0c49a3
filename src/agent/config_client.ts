/**
 * The agent config's `client` block (Nomad's names, command/agent/config.go ClientConfig):
 *
 *   client {
 *     enabled    = true                      # run a node agent (as -client)
 *     servers    = ["10.0.0.1"]              # the servers (as -servers); a bare host means port 4647
 *     server_join { retry_join = ["10.0.0.2"] }   # more servers to dial (config_server.ts)
 *     node_class = "storage"                 # Node.NodeClass
 *     meta { rack = "r1" }                   # Node.Meta (as -meta)
 *     host_volume "data" { path = "/srv/data"  read_only = false }
 *     reserved { cpu = 500  memory = 512  disk = 1024 }   # MHz, MiB, MiB kept from the scheduler
 *     cpu_total_compute = 8000   # overrides the fingerprinted MHz (also memory_total_mb, disk_total_mb)
 *     options { "driver.raw_exec.enable" = "1" }          # Nomad's legacy driver options (config_plugins.ts)
 *     csi_volume_stats_interval = "1m"   # berth: how often published volumes' usage is read
 *     csi_unmount_escalate_after = "10m" # berth: a hung node unmount is then detached lazily
 *   }
 *
 * Nomad's other keys are dropped with a warning before this reads the block (config_triage.ts);
 * a key neither knows is refused by name. Host volume paths are checked when the agent starts (resolveHostVolumes).
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { Body } from "../api/specs/body.js";
import { BerthError } from "../structs/errors.js";
import type { ClientHostVolumeConfig } from "../structs/node.js";
import type { ReservedSetting, ResourceOverrides } from "../client/fingerprint/resources.js";
import { parseClientOptions } from "./config_plugins.js";
import { parseClientServerJoin } from "./config_server.js";

/** A host volume as configured, before its path is checked (see resolveHostVolumes). */
export interface HostVolumeSetting {
  name: string;
  path: string;
  readOnly: boolean;
}

/** What one `client` block sets; a field is present only when the block sets it. */
export interface ClientSetting {
  enabled?: boolean;
  servers?: string[];
  nodeClass?: string;
  hostVolumes: HostVolumeSetting[];
  meta: Record<string, string>;
  reserved?: ReservedSetting;
  resourceOverrides?: ResourceOverrides;
  /** `options { … }`, keys already checked against the ones berth honours. */
  options?: Record<string, string>;
  /** `csi_volume_stats_interval`, in ms (berth's; Nomad polls no volume stats). */
  csiVolumeStatsIntervalMs?: number;
  /** `csi_unmount_escalate_after`, in ms; 0: never (berth's; Nomad has no such bound, #10927). */
  csiUnmountEscalateAfterMs?: number;
}

/** Host volume names: what a jobspec's `source` can name safely (no path separators). */
const HOST_VOLUME_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export function checkHostVolumeName(where: string, name: string): string {
  if (!HOST_VOLUME_NAME.test(name)) {
    throw new BerthError(
      "ERR_VALIDATION",
      `${where}: host volume name ${JSON.stringify(name)} may only contain letters, digits, '_', '.' and '-'`,
    );
  }
  return name;
}

export function parseClient(client: Body, warnings: string[]): ClientSetting {
  const out: ClientSetting = { hostVolumes: [], meta: {} };
  const enabled = client.bool("enabled");
  if (enabled !== undefined) out.enabled = enabled;
  const servers = client.stringList("servers");
  const joined = parseClientServerJoin(client, warnings);
  if (servers !== undefined || joined !== undefined) out.servers = [...(servers ?? []), ...(joined ?? [])];
  const nodeClass = client.string("node_class");
  if (nodeClass !== undefined) out.nodeClass = nodeClass;
  for (const [name, b] of client.labelled("host_volume")) {
    const where = `${b.file}: client host_volume ${JSON.stringify(name)}`;
    checkHostVolumeName(where, name);
    const p = b.string("path");
    if (p === undefined || p === "") throw new BerthError("ERR_VALIDATION", `${where}: path is required`);
    out.hostVolumes.push({ name, path: p, readOnly: b.bool("read_only") ?? false });
    b.finish();
  }
  Object.assign(out.meta, client.stringMap("meta") ?? {});
  const reserved = client.block("reserved");
  if (reserved) {
    out.reserved = definedOnly({
      cpu: count(reserved, "cpu"),
      memory: count(reserved, "memory"),
      disk: count(reserved, "disk"),
    });
    reserved.finish();
  }
  const overrides = definedOnly({
    cpuTotalCompute: count(client, "cpu_total_compute", 1),
    memoryTotalMB: count(client, "memory_total_mb", 1),
    diskTotalMB: count(client, "disk_total_mb", 1),
  });
  if (Object.keys(overrides).length > 0) out.resourceOverrides = overrides;
  const statsNs = client.duration("csi_volume_stats_interval");
  if (statsNs !== undefined) {
    if (statsNs < 1e6) throw client.error("csi_volume_stats_interval must be at least 1ms");
    out.csiVolumeStatsIntervalMs = Math.round(statsNs / 1e6);
  }
  const escalateNs = client.duration("csi_unmount_escalate_after");
  if (escalateNs !== undefined) out.csiUnmountEscalateAfterMs = Math.round(escalateNs / 1e6);
  const options = client.stringMap("options");
  if (options !== undefined) out.options = parseClientOptions(client, options, warnings);
  client.finish();
  return out;
}

/** A whole number ≥ min (MHz or MiB), named in the refusal. */
function count(b: Body, key: string, min = 0): number | undefined {
  const n = b.integer(key);
  if (n !== undefined && n < min) throw b.error(`${key} must be ${min} or more, got ${n}`);
  return n;
}

function definedOnly<T extends object>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

/**
 * The node's host volumes (Node.HostVolumes) from the settings, the last setting of a name winning.
 * An absolute path must be an existing directory, as Nomad requires; a relative path lies in the
 * agent's data dir, which belongs to berth, so it is created there (this is how `-dev`, whose data
 * dir is a fresh temp dir, gets a host volume with no setup).
 */
export async function resolveHostVolumes(
  settings: HostVolumeSetting[],
  dataDir: string,
): Promise<Record<string, ClientHostVolumeConfig>> {
  const out: Record<string, ClientHostVolumeConfig> = {};
  for (const s of settings) {
    const where = `host volume ${JSON.stringify(s.name)}`;
    let p = s.path;
    if (!path.isAbsolute(p)) {
      const resolved = path.resolve(dataDir, p);
      if (resolved === dataDir || !resolved.startsWith(dataDir + path.sep)) {
        throw new BerthError(
          "ERR_VALIDATION",
          `${where}: relative path ${JSON.stringify(p)} must stay inside the data dir`,
        );
      }
      await fs.mkdir(resolved, { recursive: true });
      p = resolved;
    }
    if (/[\t\n\r\0]/.test(p)) {
      throw new BerthError(
        "ERR_VALIDATION",
        `${where}: path ${JSON.stringify(p)} contains a tab, newline or NUL`,
      );
    }
    const st = await fs.stat(p).catch(() => null);
    if (!st) throw new BerthError("ERR_VALIDATION", `${where}: path ${JSON.stringify(p)} does not exist`);
    if (!st.isDirectory())
      throw new BerthError("ERR_VALIDATION", `${where}: path ${JSON.stringify(p)} is not a directory`);
    out[s.name] = { Name: s.name, Path: path.normalize(p), ReadOnly: s.readOnly };
  }
  return out;
}
