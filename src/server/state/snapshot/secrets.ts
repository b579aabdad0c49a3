/**
 * The secrets inside a snapshot image are always sealed (secrets/secrets_at_rest.ts) under a key of
 * the saving server's keyring (`<server data dir>/keystore/`), which is never in the file:
 * - SQLite store: the state file holds them sealed already; the backup carries them as they are.
 * - etcd store: etcd holds them as records (not sealed), so the save seals them in the image with
 *   the saving server's keyring (created there at the first save).
 * A restore first opens every sealed value with the restoring server's keyring, read from its
 * keystore directory again (the operator copies the saving server's key file there first): one
 * that does not open refuses the restore, naming the record and the key, before anything changes.
 */
import fs from "node:fs";
import type Database from "better-sqlite3";
import type { CSIVolume } from "../../../structs/volume.js";
import type { VolumeCreateIntent } from "../../../structs/volume_intent.js";
import { Keyring } from "../secrets/keyring.js";
import { SecretsAtRest } from "../secrets/secrets_at_rest.js";

interface Row {
  namespace: string;
  id: string;
  json: string;
}

/** The keyring in `dir` as it is on disk now; with `create`, a key is made when it holds none. */
export function keyringNow(dir: string, create: boolean): Keyring {
  const ring = Keyring.load(dir);
  if (ring.size > 0 || !create) return ring;
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return Keyring.createKey(dir);
}

/**
 * Rewrites every volume and create intent of the image through `step` (inside one transaction):
 * what seals, opens or only checks them.
 */
function eachSecretRecord(
  db: Database.Database,
  volume: (v: CSIVolume) => CSIVolume,
  intent: (i: VolumeCreateIntent) => VolumeCreateIntent,
  write: boolean,
): void {
  const tables = [
    { name: "volumes", step: (v: unknown) => volume(v as CSIVolume) },
    { name: "volume_intents", step: (v: unknown) => intent(v as VolumeCreateIntent) },
  ];
  db.transaction(() => {
    for (const t of tables) {
      const put = db.prepare(`UPDATE "${t.name}" SET json = ? WHERE namespace = ? AND id = ?`);
      for (const row of db.prepare(`SELECT namespace, id, json FROM "${t.name}"`).all() as Row[]) {
        let rec: unknown;
        try {
          rec = JSON.parse(row.json);
        } catch {
          continue; // quarantined by the restored server's open-time check, as any unreadable record
        }
        const out = t.step(rec);
        if (write && out !== rec) put.run(JSON.stringify(out), row.namespace, row.id);
      }
    }
  })();
}

/** Opens every sealed secret of the image (throws the keystore error of the first that does not). */
export function checkImageSecrets(db: Database.Database, atRest: SecretsAtRest): void {
  eachSecretRecord(
    db,
    (v) => atRest.openVolume(v),
    (i) => atRest.openIntent(i),
    false,
  );
}

/** Seals every secret stored in the clear (an etcd store's rows), in place. */
export function sealImageSecrets(db: Database.Database, atRest: SecretsAtRest): void {
  eachSecretRecord(
    db,
    (v) => atRest.sealVolume(atRest.openVolume(v)),
    (i) => atRest.sealIntent(atRest.openIntent(i)),
    true,
  );
}

/** Opens every sealed secret in place (for an etcd store, which keeps them as records). */
export function openImageSecrets(db: Database.Database, atRest: SecretsAtRest): void {
  eachSecretRecord(
    db,
    (v) => atRest.openVolume(v),
    (i) => atRest.openIntent(i),
    true,
  );
}

export function secretsWith(keyring: Keyring): SecretsAtRest {
  return new SecretsAtRest(keyring);
}
