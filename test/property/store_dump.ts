/**
 * A dump of every table of the server's SQLite state file, read through a second, read-only
 * connection (WAL lets it read while the server writes). Nothing is excluded: the write index
 * (`meta`) and the per-table indexes (`table_index`) are part of the dump, so a refused request that
 * merely bumps an index is caught too. Rows are sorted, so the dump does not depend on SQLite's
 * storage order; two dumps are equal exactly when the stored state is.
 */
import path from "node:path";
import Database from "better-sqlite3";

export class StoreDump {
  private readonly db: Database.Database;

  constructor(dataDir: string) {
    this.db = new Database(path.join(dataDir, "state.db"), { readonly: true, fileMustExist: true });
  }

  /** Every table name, the schema's own tables included, sorted. */
  tables(): string[] {
    const rows = this.db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all() as { name: string }[];
    return rows.map((r) => r.name);
  }

  /** `table: [rows]` per table, each row as JSON, rows sorted; one string to compare. */
  dump(): string {
    const out: string[] = [];
    // One read transaction: every table as of the same commit.
    this.db.transaction(() => {
      for (const t of this.tables()) {
        const rows = this.db
          .prepare(`SELECT * FROM "${t}"`)
          .all()
          .map((r) => JSON.stringify(r));
        rows.sort();
        out.push(`${t}: ${rows.length}\n${rows.join("\n")}`);
      }
    })();
    return out.join("\n");
  }

  /** The store's write index (meta), to see background writes settle. */
  writeIndex(): number {
    const rows = this.db.prepare("SELECT value FROM meta").all() as { value: number }[];
    return rows.reduce((m, r) => Math.max(m, r.value), 0);
  }

  close(): void {
    this.db.close();
  }
}

/** The first lines where two dumps differ, for a readable failure message. */
export function dumpDiff(a: string, b: string, max = 6): string {
  const la = a.split("\n");
  const lb = b.split("\n");
  const out: string[] = [];
  for (let i = 0; i < Math.max(la.length, lb.length) && out.length < max; i++) {
    if (la[i] !== lb[i]) out.push(`- ${(la[i] ?? "").slice(0, 300)}\n+ ${(lb[i] ?? "").slice(0, 300)}`);
  }
  return out.join("\n");
}
