/**
 * The server → node calls of Nomad's client FS endpoints (`/v1/client/fs/ls|stat|readat|cat`,
 * `alloc fs`): one alloc dir on the node, read without following links. `Path` is relative to the
 * alloc dir (`/` or "" is the alloc dir itself), as Nomad's; the node confines it (client/allocdir/
 * fs_path.ts).
 */

/** Nomad's AllocFileInfo (api/fs.go). ModTime is RFC 3339, as Go's time.Time in JSON. */
export interface AllocFileInfo {
  Name: string;
  IsDir: boolean;
  Size: number;
  /** Go's os.FileMode.String(): "drwxr-xr-x", "-rw-r--r--", "Lrwxrwxrwx" (structs/file_mode.ts). */
  FileMode: string;
  ModTime: string;
  /** Stat only (Nomad's detectContentType); "" in listings. */
  ContentType: string;
}

export interface AllocFsPathRequest {
  AllocID: string;
  Path: string;
}

export interface AllocFsReadRequest extends AllocFsPathRequest {
  /** From the start of the file. */
  Offset: number;
  /** At most this many bytes (the node caps it further: MAX_FS_READ). */
  Limit: number;
}

export interface AllocFsReadResponse {
  /** Base64. */
  Data: string;
  /** The file's size when read. */
  Size: number;
}

/** A single read's cap on the node: the server asks again from the new offset. */
export const MAX_FS_READ = 1 << 20;
