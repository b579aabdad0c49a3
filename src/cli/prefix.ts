/**
 * Nomad lets a UUID be given by a unique prefix, and the tables print only 8 characters. A lookup
 * the server answers with ERR_NOT_FOUND is retried as a prefix search over the list (filtered here
 * too, in case the server ignores `?prefix=`).
 */
import { hasErrorCode } from "../api/index.js";

export async function getByIdOrPrefix<T>(
  id: string,
  kind: string,
  get: (id: string) => Promise<T>,
  list: (prefix: string) => Promise<{ ID: string }[]>,
): Promise<T> {
  try {
    return await get(id);
  } catch (err) {
    if (!hasErrorCode(err, "ERR_NOT_FOUND")) throw err;
    const matches = (await list(id)).filter((x) => x.ID.startsWith(id));
    if (matches.length === 1) return get(matches[0]!.ID);
    if (matches.length > 1) {
      const ids = matches.map((m) => m.ID).sort();
      throw new Error(`prefix ${JSON.stringify(id)} matched ${matches.length} ${kind}s: ${ids.join(", ")}`, {
        cause: err,
      });
    }
    throw err;
  }
}
