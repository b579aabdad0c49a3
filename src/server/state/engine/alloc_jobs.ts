/**
 * Allocs are stored without their job. An alloc carries a copy of its job as it was placed, and a
 * job of 1,000 allocs held 1,000 copies of the same text: two thirds of every alloc row, parsed
 * again by every read of the job's allocs (the scheduler's passes, the deployment watcher, the
 * allocation lists) and written again by every status update from a node. Nomad's state store
 * shares one Job among the allocs that carry it; this store does the same on disk:
 *
 * - the `allocs` row holds the alloc's JSON with `Job` left out, and `job_key`, the key of its job
 *   copy in `alloc_jobs`;
 * - `alloc_jobs` holds each distinct copy once, keyed by the SHA-256 of its JSON, so equal copies
 *   share a row whoever wrote them, and a write rolled back can never leave a key naming the wrong
 *   text; `create_index` is the copy's `CreateIndex` (which incarnation of the job it is), so the
 *   store can answer by index without parsing;
 * - a read attaches the copy again, parsed once and kept in a bounded cache as a deep-frozen object
 *   shared by every alloc read with it. **An alloc's Job is read-only**: copy it to change it. The
 *   freeze enforces this (an assignment throws, ESM code is strict), so a reader that changed it
 *   cannot corrupt what the next reader sees. A job written into an alloc is frozen by the write,
 *   for the same reason and so that its key is computed once per object, not once per alloc;
 * - a copy goes when the last alloc that refers to it does.
 *
 * The commit feed carries an alloc's JSON as stored, without its job (commit_feed.ts).
 */
import { createHash } from "node:crypto";
import type Database from "better-sqlite3";
import type { Allocation } from "../../../structs/alloc.js";
import type { Job } from "../../../structs/job.js";

/** The schema step that moves every stored alloc's job into `alloc_jobs` (schema.ts). */
export function migrateAllocJobs(db: Database.Database): void {
  db.exec(`
    CREATE TABLE alloc_jobs (key TEXT PRIMARY KEY, create_index INTEGER NOT NULL, json TEXT NOT NULL);
    ALTER TABLE allocs ADD COLUMN job_key TEXT;
    CREATE INDEX allocs_by_job_key ON allocs (job_key);
  `);
  const putJob = db.prepare(PUT_JOB);
  const setAlloc = db.prepare("UPDATE allocs SET json = ?, job_key = ? WHERE id = ?");
  for (const row of db.prepare("SELECT id, json FROM allocs").all() as { id: string; json: string }[]) {
    let alloc: Partial<Allocation>;
    try {
      alloc = JSON.parse(row.json) as Partial<Allocation>;
    } catch {
      continue; // left as it is: the quarantine pass after the migrations moves it out
    }
    if (alloc === null || typeof alloc !== "object" || typeof alloc.Job !== "object" || alloc.Job === null)
      continue;
    const { Job: job, ...rest } = alloc;
    const copy = copyOf(job);
    putJob.run(copy.key, copy.createIndex, copy.json);
    setAlloc.run(JSON.stringify(rest), copy.key, row.id);
  }
}

const PUT_JOB = "INSERT OR IGNORE INTO alloc_jobs (key, create_index, json) VALUES (?, ?, ?)";
/** Removes a copy no alloc names any more (its key bound to both parameters); the quarantine uses it too. */
export const DROP_JOB_IF_UNUSED =
  "DELETE FROM alloc_jobs WHERE key = ? AND NOT EXISTS (SELECT 1 FROM allocs WHERE job_key = ?)";

export function prepareAllocJobStatements(db: Database.Database) {
  return {
    get: db.prepare("SELECT json FROM alloc_jobs WHERE key = ?"),
    put: db.prepare(PUT_JOB),
    dropIfUnused: db.prepare(DROP_JOB_IF_UNUSED),
  };
}

export type AllocJobStatements = ReturnType<typeof prepareAllocJobStatements>;

/** An `allocs` row as the alloc reads select it. */
export interface AllocRow {
  json: string;
  job_key: string | null;
}

/** The column list every alloc read selects (statements.ts). */
export const ALLOC_COLUMNS = "json, job_key";

export interface JobCopy {
  key: string;
  createIndex: number;
  json: string;
}

function copyOf(job: unknown): JobCopy {
  const json = JSON.stringify(job);
  return {
    key: createHash("sha256").update(json).digest("base64url"),
    createIndex: createIndexOf(job),
    json,
  };
}

function createIndexOf(job: unknown): number {
  const createIndex = (job as { CreateIndex?: unknown }).CreateIndex;
  return typeof createIndex === "number" ? createIndex : 0;
}

/** Freezes `v` and everything reachable from it (plain JSON data: objects and arrays). */
function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const child of Object.values(v)) deepFreeze(child);
  }
  return v;
}

/**
 * The job copies of one store: the cache of parsed copies its reads attach, and the copies its
 * writes store and drop. Shared by the store's reader and its transactions' writers; the cache holds
 * only content (keys are hashes), so a transaction rolled back cannot make it wrong.
 */
export class AllocJobs {
  /** Parsed, frozen copies by key, least recently used first. */
  private readonly cache = new Map<string, Job>();
  /** What this store knows of a frozen copy it handed out, so a write of it skips the hashing. */
  private readonly known = new WeakMap<object, JobCopy>();

  constructor(
    private readonly s: AllocJobStatements,
    private readonly capacity = 256,
  ) {}

  /** The alloc of a row, its job attached. */
  read(row: AllocRow): Allocation {
    const alloc = JSON.parse(row.json) as Allocation;
    if (row.job_key !== null) alloc.Job = this.job(row.job_key);
    return alloc;
  }

  readAll(rows: unknown[]): Allocation[] {
    return (rows as AllocRow[]).map((r) => this.read(r));
  }

  readOne(row: unknown): Allocation | undefined {
    return row === undefined ? undefined : this.read(row as AllocRow);
  }

  /**
   * `job`'s copy as stored: its key and text, computed once per object. A job this store has not
   * seen is deep-frozen here, so that the next write of the same object (a scheduling pass puts
   * one job object into every alloc it places) reuses the key instead of hashing its text again:
   * **a job put into an alloc is read-only from then on**, as one read back is.
   */
  copyOf(job: Job | undefined): JobCopy | null {
    if (!job) return null;
    const seen = this.known.get(job);
    if (seen) return seen;
    const copy = copyOf(job);
    // Frozen only if it was not already: an object frozen elsewhere may hold parts that are not.
    if (!Object.isFrozen(job)) this.known.set(deepFreeze(job), copy);
    return copy;
  }

  /**
   * Writes the copy unless a row already holds it; returns its key (null without a job). Always
   * asks SQLite (INSERT OR IGNORE): a copy known from an earlier read may have gone since.
   */
  store(copy: JobCopy | null): string | null {
    if (!copy) return null;
    this.s.put.run(copy.key, copy.createIndex, copy.json);
    return copy.key;
  }

  /** Removes the copy under `key` if no alloc refers to it any more. */
  dropIfUnused(key: string | null): void {
    if (key !== null) this.s.dropIfUnused.run(key, key);
  }

  private job(key: string): Job {
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    const row = this.s.get.get(key) as { json: string } | undefined;
    // The writer stores a copy before the alloc that names it and drops it only with the last such
    // alloc, and the quarantine pass at open moves out any alloc whose copy is missing.
    if (!row) throw new Error(`state store: alloc job copy ${key} is missing`);
    const job = deepFreeze(JSON.parse(row.json) as Job);
    // The stored text is what copyOf wrote, so it is this object's JSON too.
    this.known.set(job, { key, createIndex: createIndexOf(job), json: row.json });
    this.cache.set(key, job);
    if (this.cache.size > this.capacity) this.cache.delete(this.cache.keys().next().value!);
    return job;
  }
}
