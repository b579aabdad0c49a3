/**
 * Node identity (Nomad's Node.SecretID). A node agent makes a random secret on its first start and
 * keeps it in its state (client/secret-id); it sends it as `Node.SecretID` in Node.Register, the
 * first call of every agent RPC connection. The server keeps only a SHA-256 of it on the node
 * record (Node.SecretIDHash), binding it at the node's first registration; every later
 * registration of that node ID must present the same secret, or it is refused with
 * ERR_PERMISSION_DENIED and nothing about the node changes (its record, its live connection).
 *
 * The secret is a random UUID (122 random bits), so one fast hash is enough: there is nothing to
 * guess that a slow password hash would protect, and the comparison is constant-time.
 *
 * Records written before secrets existed carry no hash: the first registration that presents a
 * secret binds it (trust on first use after the upgrade, as Nomad accepts any secret for a stored
 * node whose SecretID is empty). A registration without a secret is always refused.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { BerthError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";

/** Nomad's client makes its secret with uuid.Generate(); berth's agent with randomUUID(). */
const SECRET_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The SecretID a Node.Register request presents, hashed; the secret itself goes no further. A
 * missing or malformed one is refused as a permission failure (it proves nothing), naming the field
 * but never echoing what was sent.
 */
export function presentedSecretHash(node: unknown): string {
  const secret = isObject(node) ? node.SecretID : undefined;
  if (typeof secret !== "string" || secret === "") {
    throw new BerthError(
      "ERR_PERMISSION_DENIED",
      "Node.SecretID is required: a node proves its identity with the secret it registered with",
    );
  }
  if (!SECRET_PATTERN.test(secret)) {
    throw new BerthError("ERR_PERMISSION_DENIED", "Node.SecretID must be a UUID");
  }
  return hashNodeSecret(secret);
}

export function hashNodeSecret(secret: string): string {
  return createHash("sha256").update(secret.toLowerCase(), "utf8").digest("hex");
}

/**
 * The hash to store for the node after a registration that presented `presented`: the stored one
 * when it matches, `presented` when none is stored yet; a mismatch is refused (Nomad's text).
 */
export function boundSecretHash(stored: unknown, presented: string): string {
  if (stored === undefined || stored === null || stored === "") return presented;
  // A stored value that is not a hash (a hand-edited record) matches nothing: refused, never bound over.
  const a = Buffer.from(typeof stored === "string" ? stored : "", "utf8");
  const b = Buffer.from(presented, "utf8");
  if (a.length !== b.length || !timingSafeEqual(a, b)) {
    throw new BerthError("ERR_PERMISSION_DENIED", "node secret ID does not match. Not registering node.");
  }
  return presented;
}
