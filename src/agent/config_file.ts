/**
 * The agent's config file(s) (`berth agent -config FILE`), in Nomad's agent config syntax, HCL or
 * JSON. berth reads the client's host volumes and meta from it:
 *
 *   client {
 *     host_volume "hostpath-data" {
 *       path      = "/srv/hostpath"
 *       read_only = false
 *     }
 *     meta {
 *       rack = "r1"
 *     }
 *     reserved { cpu = 500  memory = 512  disk = 1024 }   # MHz, MiB, MiB kept from the scheduler
 *     cpu_total_compute = 8000   # overrides the fingerprinted MHz (also memory_total_mb, disk_total_mb)
 *   }
 *   limits { http_max_conns_per_client = 100 }   # the server's listener (config_limits.ts)
 *   tls { http = true  rpc = true  ca_file = "…" … }  # mutual TLS (config_tls.ts)
 *   acl { enabled = true }                       # ACL tokens and policies (config_acl.ts)
 *   http_api_response_headers = { "Access-Control-Allow-Origin" = "https://ui.example" }  # config_http.ts
 *
 * Anything else is refused by name, so a setting berth does not honour is never silently ignored.
 * A directory given to -config is read as Nomad reads one: its *.hcl and *.json files in name order.
 * Later files and the command-line flags win over earlier settings of the same name.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { Body, SpecError } from "../api/specs/body.js";
import { decodeHcl } from "../api/specs/hcl.js";
import { BerthError } from "../structs/errors.js";
import type { ClientHostVolumeConfig } from "../structs/node.js";
import type { ReservedSetting, ResourceOverrides } from "../client/fingerprint/resources.js";
import { parseLimits, type LimitsSetting } from "./config_limits.js";
import { parseTls, type TlsSetting } from "./config_tls.js";
import { parseAcl, type AclSetting } from "./config_acl.js";
import { mergeHttpApi, parseHttpApiResponseHeaders, type HttpApiSetting } from "./config_http.js";

/** A host volume as configured, before its path is checked (see resolveHostVolumes). */
export interface HostVolumeSetting {
  name: string;
  path: string;
  readOnly: boolean;
}

export interface AgentFileConfig {
  hostVolumes: HostVolumeSetting[];
  meta: Record<string, string>;
  /** Present when some file has a `limits` block. */
  limits?: LimitsSetting;
  /** client `reserved { cpu, memory, disk }` (Nomad's names); later files win per field. */
  reserved?: ReservedSetting;
  /** client `cpu_total_compute`, `memory_total_mb`, `disk_total_mb`. */
  resourceOverrides?: ResourceOverrides;
  /** Present when some file has a `tls` block (config_tls.ts); later files win per field. */
  tls?: TlsSetting;
  /** Present when some file has an `acl` block; later files win per setting. */
  acl?: AclSetting;
  /** `http_api_response_headers` and the browser origin it allows (config_http.ts). */
  httpApi?: HttpApiSetting;
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

/** Reads and merges the config files (or directories) in order. */
export async function readAgentConfigFiles(paths: string[]): Promise<AgentFileConfig> {
  const out: AgentFileConfig = { hostVolumes: [], meta: {} };
  for (const p of paths) {
    for (const file of await configFilesAt(p)) {
      const cfg = await parseAgentConfig(file, await fs.readFile(file, "utf8"));
      out.hostVolumes.push(...cfg.hostVolumes);
      Object.assign(out.meta, cfg.meta);
      if (cfg.limits) out.limits = { ...out.limits, ...cfg.limits };
      if (cfg.tls) out.tls = { ...out.tls, ...cfg.tls };
      if (cfg.acl) out.acl = { ...out.acl, ...cfg.acl };
      if (cfg.httpApi) out.httpApi = mergeHttpApi(out.httpApi, cfg.httpApi);
      if (cfg.reserved) out.reserved = { ...out.reserved, ...cfg.reserved };
      if (cfg.resourceOverrides)
        out.resourceOverrides = { ...out.resourceOverrides, ...cfg.resourceOverrides };
    }
  }
  return out;
}

async function configFilesAt(p: string): Promise<string[]> {
  const st = await fs.stat(p).catch((err: NodeJS.ErrnoException) => {
    throw new BerthError(
      "ERR_VALIDATION",
      `-config: cannot read ${JSON.stringify(p)}: ${err.code ?? err.message}`,
    );
  });
  if (!st.isDirectory()) return [p];
  const names = (await fs.readdir(p)).filter((n) => n.endsWith(".hcl") || n.endsWith(".json")).sort();
  return names.map((n) => path.join(p, n));
}

/** One file's settings. JSON is told by content, as jobspecs are (HCL is never valid JSON). */
export async function parseAgentConfig(file: string, text: string): Promise<AgentFileConfig> {
  let decoded: unknown;
  try {
    decoded = JSON.parse(text) as unknown;
  } catch {
    decoded = undefined;
  }
  try {
    if (decoded === undefined) decoded = await decodeHcl(file, text);
    return fromBody(Body.of(file, "", decoded));
  } catch (err) {
    if (err instanceof SpecError) throw new BerthError("ERR_VALIDATION", `-config: ${err.message}`);
    throw err;
  }
}

function fromBody(top: Body): AgentFileConfig {
  const out: AgentFileConfig = { hostVolumes: [], meta: {} };
  const client = top.block("client");
  const limits = top.block("limits");
  if (limits) out.limits = parseLimits(limits);
  const tls = top.block("tls");
  if (tls) out.tls = parseTls(tls);
  const acl = top.block("acl");
  if (acl) out.acl = parseAcl(acl);
  const httpApi = parseHttpApiResponseHeaders(top);
  if (httpApi) out.httpApi = httpApi;
  top.finish();
  if (!client) return out;
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
