/**
 * Nomad's AllocFS() (api/fs.go): an alloc dir's listing, one entry's stat, and a file's bytes
 * (`cat`, or `readat` from an offset with a limit), read on the alloc's node. The bytes are a
 * stream; list and stat are JSON.
 */
import type { ApiClient } from "./client.js";
import { streamGet } from "./stream_get.js";
import { enc } from "./transport.js";

/** Nomad's AllocFileInfo. ModTime is RFC 3339. */
export interface AllocFileInfo {
  Name: string;
  IsDir: boolean;
  Size: number;
  /** Go's FileMode.String(): "drwxr-xr-x", "-rw-r--r--". */
  FileMode: string;
  ModTime: string;
  /** Stat only. */
  ContentType: string;
}

export function allocFsList(api: ApiClient, allocId: string, path: string): Promise<AllocFileInfo[]> {
  return api.transport.request("GET", `/v1/client/fs/ls/${enc(allocId)}`, { query: { path } });
}

export function allocFsStat(api: ApiClient, allocId: string, path: string): Promise<AllocFileInfo> {
  return api.transport.request("GET", `/v1/client/fs/stat/${enc(allocId)}`, { query: { path } });
}

export interface FileReadQuery {
  /** Absent: the whole file (`cat`); else `readat` from here. */
  offset?: number;
  /** With offset: at most this many bytes (absent: to the end). */
  limit?: number;
  signal?: AbortSignal;
}

/** The file's bytes as the agent sends them. */
export async function* readAllocFile(
  api: ApiClient,
  allocId: string,
  path: string,
  q: FileReadQuery = {},
): AsyncGenerator<Uint8Array> {
  const { url, headers } =
    q.offset === undefined
      ? api.transport.endpoint(`/v1/client/fs/cat/${enc(allocId)}`, { path })
      : api.transport.endpoint(`/v1/client/fs/readat/${enc(allocId)}`, {
          path,
          offset: String(q.offset),
          limit: q.limit === undefined ? undefined : String(q.limit),
        });
  yield* streamGet(api, { url, headers }, q.signal);
}
