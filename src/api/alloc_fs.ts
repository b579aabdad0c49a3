/**
 * Nomad's AllocFS() (api/fs.go): an alloc dir's listing, one entry's stat, and a file's bytes
 * (`cat`, or `readat` from an offset with a limit), read on the alloc's node. The bytes are a
 * stream; list and stat are JSON.
 */
import type { ApiClient } from "./client.js";
import { ApiError, ConnectionError, ERROR_CODE_HEADER } from "./errors.js";
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
  let res: Response;
  try {
    res = await api.transport.send(url, { headers, signal: q.signal });
  } catch (err) {
    if (err instanceof Error && err.name === "AbortError") return;
    throw new ConnectionError(api.address, err);
  }
  if (!res.ok) {
    const text = (await res.text()).trim();
    throw new ApiError(res.status, text || res.statusText, res.headers.get(ERROR_CODE_HEADER) ?? undefined);
  }
  if (!res.body) return;
  for await (const chunk of res.body) yield chunk;
}
