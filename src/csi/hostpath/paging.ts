/**
 * ListVolumes/ListSnapshots paging of csi-hostpath: the token is the index of the next entry in a
 * sorted list. A token that is not such an index is ABORTED, as the spec requires.
 */
import { status } from "@grpc/grpc-js";
import { rpcError } from "./context.js";

export function page<T>(
  all: T[],
  maxEntries: number,
  startingToken: string,
): { entries: T[]; nextToken: string } {
  if (maxEntries < 0) throw rpcError(status.INVALID_ARGUMENT, "max_entries must not be negative");
  const start = startingToken === "" ? 0 : Number(startingToken);
  if (!Number.isInteger(start) || start < 0 || start > all.length) {
    throw rpcError(status.ABORTED, `starting_token ${JSON.stringify(startingToken)} is not valid`);
  }
  const end = maxEntries > 0 ? Math.min(all.length, start + maxEntries) : all.length;
  return { entries: all.slice(start, end), nextToken: end < all.length ? String(end) : "" };
}
