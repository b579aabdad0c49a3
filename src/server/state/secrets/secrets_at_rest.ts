/**
 * Volume secrets encrypted at rest. The SQLite store seals a record's secrets on write and opens
 * them on read (engine/writer.ts / engine/engine.ts), so the rest of the server only ever sees them
 * in the clear and the state file never holds them so: `CSIVolume.Secrets` of every volume and the
 * `Spec.Secrets` of every create intent (the spec adopt repeats). These are all the secrets the
 * server stores (structs/redact.ts: snapshot and detach secrets are used and dropped).
 *
 * A volume's `MountOptions.MountFlags` are sealed with its secrets (issue 30): they may carry
 * credentials (Nomad redacts them from every answer, as redact.ts does), so they ride in the same
 * sealed map under FLAGS_KEY and the stored record keeps one placeholder flag, SEALED_FLAGS. A
 * volume with flags and no secrets still gets a sealed map; opening it gives Secrets null back.
 * (A job's volume requests' mount flags are not sealed yet: they are stored with the job.)
 *
 * Sealed form: the secrets map becomes `{ "berth:sealed:v1": "<KeyID>.<nonce>.<ciphertext+tag>" }`
 * (base64url), AES-256-GCM under the keyring's key (keyring.ts) with a fresh 96-bit nonce and the
 * record's table, namespace and ID as additional data, so a sealed value moved to another record
 * does not open. It is still a map of strings, so the record keeps its shape for the open-time
 * check (quarantine/quarantine.ts). An empty or absent map stays as it is (there is nothing to hide).
 *
 * At open (openSecretsAtRest): every sealed value is opened once, so a missing keystore or a wrong
 * key is a startup error naming the record and the keystore — never a volume silently without its
 * secrets; then secrets stored in the clear (by an older berth) are sealed in one transaction; the
 * first start creates the key.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type Database from "better-sqlite3";
import { BerthError } from "../../../structs/errors.js";
import type { CSIVolume } from "../../../structs/volume.js";
import type { VolumeCreateIntent } from "../../../structs/volume_intent.js";
import type { Logger } from "../../../internal/log.js";
import { Keyring } from "./keyring.js";

export const SEALED_KEY = "berth:sealed:v1";
/** The key under which a volume's mount flags ride in its sealed map (JSON text of the list). */
const FLAGS_KEY = "berth:mount_flags";
/** The one flag a stored volume shows where its flags were sealed. */
export const SEALED_FLAGS = "berth:sealed";
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

type Secrets = Record<string, string> | null | undefined;
type Kind = "volume" | "intent";

/** Opened secret sets kept, so listing many volumes does not decrypt each on every read. */
const OPEN_CACHE_SIZE = 10_000;

export class SecretsAtRest {
  /**
   * Sealed text (with the record's additional data) → the opened map. A sealed value is never
   * reused (fresh nonce per write), so an entry cannot go stale; the oldest entry goes first.
   */
  private readonly opened = new Map<string, Readonly<Record<string, string>>>();

  constructor(private keyring: Keyring) {}

  /**
   * Seals and opens with `keyring` from now on (a snapshot restore: the operator put the keys that
   * sealed the snapshot into the keystore, and the ring is read again). Opened values stay cached:
   * a sealed value names its key, so one opened before is the same under the new ring.
   */
  useKeyring(keyring: Keyring): void {
    this.keyring = keyring;
  }

  sealVolume(vol: CSIVolume): CSIVolume {
    const flags = vol.MountOptions?.MountFlags ?? [];
    const hidden =
      flags.length > 0 ? { ...(vol.Secrets ?? {}), [FLAGS_KEY]: JSON.stringify(flags) } : vol.Secrets;
    const sealed = this.seal(hidden, aad("volume", vol.Namespace, vol.ID));
    if (sealed === vol.Secrets) return vol;
    const out: CSIVolume = { ...vol, Secrets: sealed };
    if (flags.length > 0 && vol.MountOptions)
      out.MountOptions = { ...vol.MountOptions, MountFlags: [SEALED_FLAGS] };
    return out;
  }

  openVolume(vol: CSIVolume): CSIVolume {
    const open = this.open(
      vol.Secrets,
      aad("volume", vol.Namespace, vol.ID),
      `volume ${vol.Namespace}/${vol.ID}`,
    );
    if (open === vol.Secrets) return vol;
    if (!open || !(FLAGS_KEY in open)) return { ...vol, Secrets: open };
    const { [FLAGS_KEY]: flagsText, ...secrets } = open;
    const out: CSIVolume = { ...vol, Secrets: Object.keys(secrets).length > 0 ? secrets : null };
    if (vol.MountOptions)
      out.MountOptions = { ...vol.MountOptions, MountFlags: JSON.parse(flagsText) as string[] };
    return out;
  }

  sealIntent(intent: VolumeCreateIntent): VolumeCreateIntent {
    const sealed = this.seal(intent.Spec.Secrets, aad("intent", intent.Namespace, intent.ID));
    return sealed === intent.Spec.Secrets ? intent : { ...intent, Spec: { ...intent.Spec, Secrets: sealed } };
  }

  openIntent(intent: VolumeCreateIntent): VolumeCreateIntent {
    const where = `volume create intent ${intent.Namespace}/${intent.ID}`;
    const open = this.open(intent.Spec.Secrets, aad("intent", intent.Namespace, intent.ID), where);
    return open === intent.Spec.Secrets ? intent : { ...intent, Spec: { ...intent.Spec, Secrets: open } };
  }

  private seal<T extends Secrets>(secrets: T, ad: Buffer): T | Record<string, string> {
    // Always sealed, even a caller's map that looks sealed: open() then gives back exactly that map.
    if (!secrets || Object.keys(secrets).length === 0) return secrets;
    const key = this.keyring.active();
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv("aes-256-gcm", key.key, nonce);
    cipher.setAAD(ad);
    const ct = Buffer.concat([
      cipher.update(JSON.stringify(secrets), "utf8"),
      cipher.final(),
      cipher.getAuthTag(),
    ]);
    const sealed = `${key.KeyID}.${nonce.toString("base64url")}.${ct.toString("base64url")}`;
    // The next read of this record opens it from the cache, not by decrypting.
    this.remember(`${ad.toString("base64")}:${sealed}`, secrets);
    return { [SEALED_KEY]: sealed };
  }

  private remember(cacheKey: string, secrets: Record<string, string>): void {
    if (this.opened.size >= OPEN_CACHE_SIZE) this.opened.delete(this.opened.keys().next().value!);
    this.opened.set(cacheKey, Object.freeze({ ...secrets }));
  }

  private open<T extends Secrets>(secrets: T, ad: Buffer, where: string): T | Record<string, string> {
    if (!secrets || !isSealed(secrets)) return secrets;
    const cacheKey = `${ad.toString("base64")}:${secrets[SEALED_KEY]}`;
    const hit = this.opened.get(cacheKey);
    if (hit) return { ...hit };
    const result = this.decrypt(secrets[SEALED_KEY]!, ad, where);
    this.remember(cacheKey, result);
    return result;
  }

  private decrypt(sealed: string, ad: Buffer, where: string): Record<string, string> {
    const [keyId = "", nonce = "", data = ""] = sealed.split(".");
    const key = this.keyring.get(keyId);
    if (!key) {
      throw keystoreError(
        `${where}: its secrets are sealed with key ${keyId}, which the keystore ${this.keyring.dir} does not ` +
          "hold (restore the keystore that was backed up with this state)",
      );
    }
    const ct = Buffer.from(data, "base64url");
    try {
      const decipher = createDecipheriv("aes-256-gcm", key.key, Buffer.from(nonce, "base64url"));
      decipher.setAAD(ad);
      decipher.setAuthTag(ct.subarray(ct.length - TAG_BYTES));
      const text = Buffer.concat([decipher.update(ct.subarray(0, ct.length - TAG_BYTES)), decipher.final()]);
      return JSON.parse(text.toString("utf8")) as Record<string, string>;
    } catch {
      throw keystoreError(
        `${where}: its secrets do not open with key ${keyId} of the keystore ${this.keyring.dir} ` +
          "(the key file does not match this state, or the record was altered)",
      );
    }
  }
}

/**
 * Opens the keyring in `keystoreDir` and brings the state's secrets under it (see the file
 * comment). Throws a clear ERR_VALIDATION (field `keystore`) when sealed secrets cannot be opened.
 */
export function openSecretsAtRest(db: Database.Database, keystoreDir: string, log: Logger): SecretsAtRest {
  const rows = storedSecrets(db);
  let keyring = Keyring.load(keystoreDir);
  const sealed = rows.filter((r) => isSealed(r.secrets));
  if (keyring.size === 0) {
    if (sealed.length > 0) {
      throw keystoreError(
        `the state holds ${sealed.length} sealed secret set(s) but the keystore ${keystoreDir} holds no key ` +
          "(restore the keystore that was backed up with this state)",
      );
    }
    keyring = Keyring.createKey(keystoreDir);
    log.info("created the keyring that seals secrets at rest", { keystore: keystoreDir });
  }
  const atRest = new SecretsAtRest(keyring);
  // Opened once now: a wrong or missing key fails the start, not a later claim.
  for (const r of sealed) {
    if (r.kind === "volume") atRest.openVolume(r.rec as CSIVolume);
    else atRest.openIntent(r.rec as VolumeCreateIntent);
  }
  const clear = rows.filter(
    (r) =>
      (!isSealed(r.secrets) && isStringMap(r.secrets) && Object.keys(r.secrets).length > 0) ||
      (r.kind === "volume" && hasClearFlags(r.rec)),
  );
  if (clear.length > 0) {
    const putVolume = db.prepare("UPDATE volumes SET json = ? WHERE namespace = ? AND id = ?");
    const putIntent = db.prepare("UPDATE volume_intents SET json = ? WHERE namespace = ? AND id = ?");
    db.transaction(() => {
      for (const r of clear) {
        if (r.kind === "volume") {
          // Opened first: sealed secrets beside clear flags are sealed again with them.
          const vol = atRest.openVolume(r.rec as CSIVolume);
          putVolume.run(JSON.stringify(atRest.sealVolume(vol)), r.namespace, r.id);
        } else {
          putIntent.run(JSON.stringify(atRest.sealIntent(r.rec as VolumeCreateIntent)), r.namespace, r.id);
        }
      }
    })();
    // The WAL's frames are copied into the file and the WAL emptied, so the sealed pages (zeroed
    // where the clear ones were, secure_delete) are the only copy left.
    db.pragma("wal_checkpoint(TRUNCATE)");
    log.info("sealed secrets stored in the clear by an older berth", { records: clear.length });
  }
  return atRest;
}

interface StoredRow {
  kind: Kind;
  namespace: string;
  id: string;
  rec: unknown;
  secrets: unknown;
}

/** Every volume and intent whose JSON parses, with its secrets map as stored (the rest: quarantine's). */
function storedSecrets(db: Database.Database): StoredRow[] {
  const out: StoredRow[] = [];
  const scan = (kind: Kind, sql: string, secretsOf: (rec: Record<string, unknown>) => unknown) => {
    for (const row of db.prepare(sql).all() as { namespace: string; id: string; json: string }[]) {
      let rec: unknown;
      try {
        rec = JSON.parse(row.json);
      } catch {
        continue;
      }
      if (typeof rec !== "object" || rec === null) continue;
      const r = rec as Record<string, unknown>;
      // The record's own keys name it in the additional data; a record whose keys disagree with
      // its row is quarantined at open, not sealed under the wrong name.
      if (r.Namespace !== row.namespace || r.ID !== row.id) continue;
      out.push({ kind, namespace: row.namespace, id: row.id, rec, secrets: secretsOf(r) });
    }
  };
  scan("volume", "SELECT namespace, id, json FROM volumes", (r) => r.Secrets);
  scan("intent", "SELECT namespace, id, json FROM volume_intents", (r) =>
    typeof r.Spec === "object" && r.Spec !== null ? (r.Spec as Record<string, unknown>).Secrets : undefined,
  );
  return out;
}

/** Whether a stored volume shows mount flags in the clear (not the sealed placeholder). */
function hasClearFlags(rec: unknown): boolean {
  const mo = (rec as { MountOptions?: { MountFlags?: unknown } }).MountOptions;
  const flags = mo?.MountFlags;
  return Array.isArray(flags) && flags.length > 0 && !(flags.length === 1 && flags[0] === SEALED_FLAGS);
}

function isStringMap(v: unknown): v is Record<string, string> {
  return (
    typeof v === "object" &&
    v !== null &&
    !Array.isArray(v) &&
    Object.values(v).every((x) => typeof x === "string")
  );
}

function isSealed(v: unknown): v is Record<string, string> {
  if (!isStringMap(v)) return false;
  const keys = Object.keys(v);
  return keys.length === 1 && keys[0] === SEALED_KEY;
}

function aad(kind: Kind, namespace: string, id: string): Buffer {
  return Buffer.from(`berth/${kind}\0${namespace}\0${id}`, "utf8");
}

function keystoreError(message: string): BerthError {
  return new BerthError("ERR_VALIDATION", message, { field: "keystore" });
}
