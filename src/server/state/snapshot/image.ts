/**
 * A snapshot's payload is a SQLite database image with the server state's schema (engine/schema.ts),
 * whatever store it came from: the SQLite store's online backup, or the etcd store's rows at one
 * revision replayed into an in-memory replica. This file reads and checks such an image: what
 * `inspect` shows (counts and sizes per record type, the keys that sealed its secrets), and the
 * rows a restore writes, table by table in rowid order.
 *
 * An image restored is first opened in memory, checked (SQLite's quick_check), and moved up to
 * this berth's schema (an older berth's snapshot migrates as its state file would); one written by
 * a newer berth is refused.
 */
import { gunzip } from "node:zlib";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { isBerthError } from "../../../structs/errors.js";
import { migrate } from "../engine/schema.js";
import { SEALED_KEY } from "../secrets/secrets_at_rest.js";
import { snapshotError, type SnapshotTypeStat } from "./format.js";

const gunzipAsync = promisify(gunzip);

/** Rows that are the store's own bookkeeping on one server, never carried over. */
const LOCAL_TABLES = new Set(["quarantine"]);

/** How `inspect` names each table's records (Nomad's snapshot types where it has the same thing). */
const TYPE_NAMES: Record<string, string> = {
  nodes: "Node",
  jobs: "Job",
  job_versions: "JobVersion",
  allocs: "Allocation",
  alloc_jobs: "AllocJobCopy",
  volumes: "CSIVolume",
  volume_intents: "CSIVolumeCreateIntent",
  plugins: "CSIPlugin",
  evals: "Evaluation",
  deployments: "Deployment",
  namespaces: "Namespace",
  acl_policies: "ACLPolicy",
  acl_tokens: "ACLToken",
  periodic_launches: "PeriodicLaunch",
  plugin_capacity: "CSIPluginCapacity",
};

/** The tables whose rows a snapshot carries, by name (every table but the local ones). */
export function carriedTables(db: Database.Database): string[] {
  const names = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .pluck()
    .all() as string[];
  return names.filter((n) => !LOCAL_TABLES.has(n));
}

export function columnsOf(db: Database.Database, table: string): string[] {
  return (db.prepare(`PRAGMA table_info("${table}")`).all() as { name: string }[]).map((c) => c.name);
}

/** The image's write index (meta `index`), 0 when it has none. */
export function imageIndex(db: Database.Database): number {
  const v = db.prepare("SELECT value FROM meta WHERE key = 'index'").pluck().get() as number | undefined;
  return v ?? 0;
}

export function imageSchema(db: Database.Database): number {
  return db.pragma("user_version", { simple: true }) as number;
}

/** Count and bytes (of the stored JSON) of each record type, largest first, as Nomad's inspect. */
export function imageTypes(db: Database.Database): SnapshotTypeStat[] {
  const out: SnapshotTypeStat[] = [];
  for (const table of carriedTables(db)) {
    const name = TYPE_NAMES[table];
    if (!name) continue;
    const r = db
      .prepare(`SELECT COUNT(*) AS n, COALESCE(SUM(LENGTH(json)), 0) AS size FROM "${table}"`)
      .get() as { n: number; size: number };
    out.push({ Name: name, Count: r.n, Size: r.size });
  }
  return out.sort((a, b) => b.Size - a.Size || a.Name.localeCompare(b.Name));
}

/** The IDs of the keyring keys that sealed the image's secrets (sealed form: `<KeyID>.<nonce>.<ct>`). */
export function imageKeyIds(db: Database.Database): string[] {
  const path = `'$.Secrets."${SEALED_KEY}"'`;
  const intentPath = `'$.Spec.Secrets."${SEALED_KEY}"'`;
  const sealed = [
    ...db.prepare(`SELECT json_extract(json, ${path}) FROM volumes WHERE json_valid(json)`).pluck().all(),
    ...db
      .prepare(`SELECT json_extract(json, ${intentPath}) FROM volume_intents WHERE json_valid(json)`)
      .pluck()
      .all(),
  ];
  const ids = new Set<string>();
  for (const s of sealed) if (typeof s === "string") ids.add(s.split(".")[0] ?? "");
  return [...ids].sort();
}

/**
 * The payload opened as an in-memory database at this berth's schema, checked; the caller closes
 * it. A payload that is not gzip, not a SQLite image, damaged or from a newer schema is refused.
 */
export async function openPayload(payload: Buffer, expectSchema: number): Promise<Database.Database> {
  let image: Buffer;
  try {
    image = await gunzipAsync(payload);
  } catch {
    throw snapshotError("the payload is not gzip data (the file is corrupt)");
  }
  let db: Database.Database;
  try {
    db = new Database(image);
  } catch {
    throw snapshotError("the payload is not a SQLite database image");
  }
  try {
    const check = db.pragma("quick_check", { simple: true }) as string;
    if (check !== "ok") throw snapshotError(`the payload's database is damaged (${check})`);
    const schema = imageSchema(db);
    if (schema > expectSchema) {
      throw snapshotError(
        `it was written by a newer berth (state schema ${schema}; this berth's is ${expectSchema})`,
      );
    }
    if (!carriedTables(db).includes("meta")) throw snapshotError("the payload holds no berth state");
    migrate(db);
    return db;
  } catch (err) {
    db.close();
    if (isBerthError(err)) throw err;
    throw snapshotError(`the payload's database cannot be read (${(err as Error).message})`);
  }
}

/** One table's rows, in rowid order (evals list in that order), with the image's column names. */
export function tableRows(db: Database.Database, table: string): { columns: string[]; rows: unknown[][] } {
  const columns = columnsOf(db, table);
  const q = columns.map((c) => `"${c}"`).join(", ");
  return {
    columns,
    rows: db.prepare(`SELECT ${q} FROM "${table}" ORDER BY rowid`).raw().all() as unknown[][],
  };
}
