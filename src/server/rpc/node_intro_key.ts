/**
 * The key node introduction tokens are signed with (node_intro.ts). Every server that may check a
 * token must hold the same key:
 * - on etcd, it is derived (HKDF-SHA256) from the cluster secret every server of the cluster shares
 *   (leader/cluster.ts), so no second secret is kept; until the server has joined the cluster the
 *   key is not known and a token can be neither made nor checked (ERR_RPC_UNAVAILABLE);
 * - a lone server keeps 32 random bytes in `<server data dir>/intro-signing.key` (0600, made once),
 *   so tokens survive a restart; without a data dir (tests, -dev) the key lives in memory.
 * Losing the key only invalidates unused tokens: a node on record proves itself with its secret.
 */
import { hkdfSync, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { BerthError } from "../../structs/errors.js";
import { PRIVATE_FILE_MODE } from "../../internal/private_files.js";
import { DEFAULT_INTRO_SETTINGS, NodeIntroTokens, type IntroSettings } from "./node_intro.js";
import { withDefaults } from "../../internal/with_defaults.js";

const KEY_BYTES = 32;
export const INTRO_KEY_FILE = "intro-signing.key";

export function introSigningKey(
  dataDir: string | null,
  clusterSecret: (() => string | undefined) | undefined,
): () => Buffer {
  if (clusterSecret) {
    let derived: { from: string; key: Buffer } | undefined;
    return () => {
      const secret = clusterSecret();
      if (!secret) throw new BerthError("ERR_RPC_UNAVAILABLE", "the server has not joined its cluster yet");
      if (derived?.from !== secret) {
        const key = Buffer.from(hkdfSync("sha256", secret, "", "berth node introduction v1", KEY_BYTES));
        derived = { from: secret, key };
      }
      return derived.key;
    };
  }
  const key = dataDir ? loadOrCreate(path.join(dataDir, INTRO_KEY_FILE)) : randomBytes(KEY_BYTES);
  return () => key;
}

function loadOrCreate(file: string): Buffer {
  try {
    const key = Buffer.from(fs.readFileSync(file, "utf8").trim(), "hex");
    if (key.length !== KEY_BYTES) {
      throw new BerthError(
        "ERR_INTERNAL",
        `${file} is not a ${KEY_BYTES}-byte hex key: remove it to make a new one`,
      );
    }
    fs.chmodSync(file, PRIVATE_FILE_MODE);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const key = randomBytes(KEY_BYTES);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, key.toString("hex") + "\n", { mode: PRIVATE_FILE_MODE });
  const fd = fs.openSync(tmp, "r");
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  fs.renameSync(tmp, file);
  return key;
}

/** The server's node introduction, from its options; `clusterSecret` only on etcd (cluster_mode.ts). */
export function nodeIntroOf(
  opts: { dataDir: string | null; intro?: Partial<IntroSettings> },
  clusterSecret: (() => string | undefined) | undefined,
): NodeIntroTokens {
  const key = introSigningKey(opts.dataDir, clusterSecret);
  return new NodeIntroTokens(key, withDefaults(DEFAULT_INTRO_SETTINGS, opts.intro));
}
