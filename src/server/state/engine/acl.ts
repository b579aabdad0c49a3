/** The SQLite statements and reads/writes of the ACL tables (schema.ts has the tables). */
import type Database from "better-sqlite3";
import type { ACLPolicy, ACLToken } from "../../../structs/acl_records.js";
import { contentOf, stamp } from "./records.js";
import { parseRow, parseRows } from "./statements.js";
import type { AclStateReader } from "../acl_store.js";
import type { Table } from "../store.js";
import type { TxnChanges } from "../commit_recorder.js";

export function prepareAclStatements(db: Database.Database) {
  return {
    getPolicy: db.prepare("SELECT json FROM acl_policies WHERE name = ?"),
    listPolicies: db.prepare("SELECT json FROM acl_policies ORDER BY name"),
    putPolicy: db.prepare(
      "INSERT INTO acl_policies (name, json) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET json = excluded.json",
    ),
    delPolicy: db.prepare("DELETE FROM acl_policies WHERE name = ?"),
    getToken: db.prepare("SELECT json FROM acl_tokens WHERE accessor_id = ?"),
    tokenBySecret: db.prepare("SELECT json FROM acl_tokens WHERE secret_hash = ?"),
    listTokens: db.prepare(
      "SELECT json FROM acl_tokens ORDER BY json_extract(json, '$.CreateIndex'), accessor_id",
    ),
    putToken: db.prepare(
      "INSERT INTO acl_tokens (accessor_id, secret_hash, json) VALUES (?, ?, ?) ON CONFLICT(accessor_id) DO UPDATE SET secret_hash = excluded.secret_hash, json = excluded.json",
    ),
    delToken: db.prepare("DELETE FROM acl_tokens WHERE accessor_id = ?"),
    getBootstrap: db.prepare("SELECT value FROM meta WHERE key = 'acl_bootstrap'"),
    setBootstrap: db.prepare(
      "INSERT INTO meta (key, value) VALUES ('acl_bootstrap', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    ),
  };
}

export type AclStatements = ReturnType<typeof prepareAclStatements>;

/** The reads, over the statements (the engine delegates to it). */
export class SqliteAclReader implements AclStateReader {
  constructor(private readonly s: AclStatements) {}
  getAclPolicy(name: string) {
    return parseRow<ACLPolicy>(this.s.getPolicy.get(name));
  }
  listAclPolicies() {
    return parseRows<ACLPolicy>(this.s.listPolicies.all());
  }
  getAclToken(accessorId: string) {
    return parseRow<ACLToken>(this.s.getToken.get(accessorId));
  }
  aclTokenBySecretHash(secretHash: string) {
    return parseRow<ACLToken>(this.s.tokenBySecret.get(secretHash));
  }
  listAclTokens() {
    return parseRows<ACLToken>(this.s.listTokens.all());
  }
  aclBootstrapIndex() {
    return (this.s.getBootstrap.get() as { value: number } | undefined)?.value ?? 0;
  }
}

/** One transaction's ACL writes; stamps indexes as store.ts's contract says. */
export class SqliteAclWriter {
  constructor(
    private readonly s: AclStatements,
    private readonly r: AclStateReader,
    private readonly writeIndex: number,
    private readonly touched: Set<Table>,
    private readonly changes?: TxnChanges,
  ) {}

  putAclPolicy(p: ACLPolicy): ACLPolicy {
    const prev = this.r.getAclPolicy(p.Name);
    if (prev && contentOf(prev) === contentOf(p)) return prev;
    const rec = stamp(p, prev, this.writeIndex);
    const json = JSON.stringify(rec);
    this.s.putPolicy.run(rec.Name, json);
    this.changes?.put("acl_policies", "", rec.Name, json, prev);
    this.touched.add("acl_policies");
    return rec;
  }

  deleteAclPolicy(name: string): boolean {
    const prev = this.changes ? this.r.getAclPolicy(name) : undefined;
    if (this.s.delPolicy.run(name).changes === 0) return false;
    if (prev) this.changes!.delete("acl_policies", "", name, prev);
    this.touched.add("acl_policies");
    return true;
  }

  putAclToken(t: ACLToken): ACLToken {
    const prev = this.r.getAclToken(t.AccessorID);
    if (prev && contentOf(prev) === contentOf(t)) return prev;
    const rec = stamp(t, prev, this.writeIndex);
    const json = JSON.stringify(rec);
    this.s.putToken.run(rec.AccessorID, rec.SecretHash, json);
    this.changes?.put("acl_tokens", "", rec.AccessorID, json, prev);
    this.touched.add("acl_tokens");
    return rec;
  }

  deleteAclToken(accessorId: string): boolean {
    const prev = this.changes ? this.r.getAclToken(accessorId) : undefined;
    if (this.s.delToken.run(accessorId).changes === 0) return false;
    if (prev) this.changes!.delete("acl_tokens", "", accessorId, prev);
    this.touched.add("acl_tokens");
    return true;
  }

  markAclBootstrapped(): void {
    this.s.setBootstrap.run(this.writeIndex);
    this.touched.add("acl_tokens");
  }
}
