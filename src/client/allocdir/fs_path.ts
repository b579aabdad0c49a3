/**
 * The path of an `alloc fs` request (Nomad's `?path=`), as components below the alloc dir. Pure:
 * the walk itself (client/rpc/client_alloc_fs.ts) goes one component at a time through open
 * directory handles and never follows a link (no_follow.ts), so a lexical check here is all
 * `..` needs: "a/../b" is "b", and a path that climbs above the alloc dir is refused, as Nomad's
 * PathEscapesAllocDir refuses it ("Path escapes the alloc directory").
 */
import { BerthError } from "../../structs/errors.js";

/** `path`'s components ("/" and "" are the alloc dir itself: no components). */
export function allocPathParts(path: string): string[] {
  if (path.includes("\0"))
    throw new BerthError("ERR_VALIDATION", "path: must not contain NUL", { field: "path" });
  const out: string[] = [];
  for (const c of path.split("/")) {
    if (c === "" || c === ".") continue;
    if (c === "..") {
      if (out.length === 0)
        throw new BerthError("ERR_VALIDATION", "Path escapes the alloc directory", { field: "path" });
      out.pop();
      continue;
    }
    out.push(c);
  }
  return out;
}

/**
 * Whether `parts` lie in a task's secrets dir (`<task>/secrets/…`, the name compared without case
 * as Nomad's check): its files are never read through the API (Nomad: "Reading secret file
 * prohibited"); listing and stat are allowed, as Nomad's.
 */
export function isSecretsPath(parts: readonly string[]): boolean {
  return parts.length >= 2 && parts[0] !== "alloc" && parts[1]!.toLowerCase() === "secrets";
}
