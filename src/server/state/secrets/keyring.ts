/**
 * The server's keyring (Nomad's keystore idea): the AES-256 root key that seals the secrets in the
 * state (secrets_at_rest.ts), kept apart from the state — in `<server data dir>/keystore/`, one
 * `<KeyID>.key.json` file per key, dir 0700 and files 0600, never in the database. A copy of the
 * state file alone therefore yields no secret; back the keystore up with the state (a state
 * restored without its key cannot start: the store refuses to open with a clear error).
 *
 * The file holds the key in the clear, protected by its mode: like Nomad's keystore on a server,
 * it guards against the state leaking (a copy, a backup, a support bundle), not against root.
 * The newest key seals; any key in the ring opens what it sealed (a ring of one until rotation).
 */
import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { BerthError } from "../../../structs/errors.js";
import { ensureDirMode, PRIVATE_FILE_MODE } from "../../../internal/private_files.js";

export const KEY_FILE_SUFFIX = ".key.json";
const ALGORITHM = "aes256-gcm";
const KEY_BYTES = 32;

export interface RootKey {
  KeyID: string;
  /** Unix nanoseconds. */
  CreateTime: number;
  key: Buffer;
}

interface KeyFile {
  KeyID: string;
  Algorithm: string;
  CreateTime: number;
  Key: string;
}

export class Keyring {
  private constructor(
    readonly dir: string,
    private readonly keys: RootKey[],
  ) {}

  /**
   * The keys in `dir` (none when it does not exist), modes tightened. A file that is not a key this
   * berth wrote is a startup error naming it, never skipped: a missing key must not pass silently.
   */
  static load(dir: string): Keyring {
    if (!fs.existsSync(dir)) return new Keyring(dir, []);
    ensureDirMode(dir);
    const keys: RootKey[] = [];
    for (const name of fs.readdirSync(dir).sort()) {
      if (!name.endsWith(KEY_FILE_SUFFIX)) continue;
      const file = path.join(dir, name);
      fs.chmodSync(file, PRIVATE_FILE_MODE);
      keys.push(parseKeyFile(file, fs.readFileSync(file, "utf8")));
    }
    keys.sort((a, b) => a.CreateTime - b.CreateTime);
    return new Keyring(dir, keys);
  }

  /** Generates a key and writes it durably (temp file, fsync, rename, fsync of the dir). */
  static createKey(dir: string): Keyring {
    ensureDirMode(dir);
    const key: RootKey = {
      KeyID: randomUUID(),
      CreateTime: Date.now() * 1_000_000,
      key: randomBytes(KEY_BYTES),
    };
    const body: KeyFile = {
      KeyID: key.KeyID,
      Algorithm: ALGORITHM,
      CreateTime: key.CreateTime,
      Key: key.key.toString("base64"),
    };
    const final = path.join(dir, `${key.KeyID}${KEY_FILE_SUFFIX}`);
    const tmp = `${final}.tmp`;
    const fd = fs.openSync(tmp, "wx", PRIVATE_FILE_MODE);
    try {
      fs.writeSync(fd, JSON.stringify(body, null, 2) + "\n");
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, final);
    const dfd = fs.openSync(dir, "r");
    try {
      fs.fsyncSync(dfd);
    } finally {
      fs.closeSync(dfd);
    }
    return Keyring.load(dir);
  }

  get size(): number {
    return this.keys.length;
  }

  /** The key new secrets are sealed with: the newest. */
  active(): RootKey {
    const k = this.keys[this.keys.length - 1];
    if (!k) throw new BerthError("ERR_INTERNAL", `the keystore ${this.dir} holds no key`);
    return k;
  }

  get(keyId: string): RootKey | undefined {
    return this.keys.find((k) => k.KeyID === keyId);
  }
}

function parseKeyFile(file: string, text: string): RootKey {
  const bad = (why: string) =>
    new BerthError("ERR_VALIDATION", `keystore: ${file} is not a usable key file: ${why}`, {
      field: "keystore",
    });
  let v: Partial<KeyFile>;
  try {
    v = JSON.parse(text) as Partial<KeyFile>;
  } catch {
    throw bad("it is not JSON");
  }
  if (typeof v.KeyID !== "string" || `${v.KeyID}${KEY_FILE_SUFFIX}` !== path.basename(file))
    throw bad("its KeyID does not match its file name");
  if (v.Algorithm !== ALGORITHM) throw bad(`its Algorithm is not ${ALGORITHM}`);
  if (typeof v.CreateTime !== "number") throw bad("it has no CreateTime");
  const key = Buffer.from(typeof v.Key === "string" ? v.Key : "", "base64");
  if (key.length !== KEY_BYTES) throw bad(`its Key is not ${KEY_BYTES} bytes of base64`);
  return { KeyID: v.KeyID, CreateTime: v.CreateTime, key };
}
