/**
 * Size bounds of a volume spec's free-form fields, checked when a volume is registered or created
 * (volume_validate.ts). Nomad sets none; berth does, because every one of these is stored with
 * the volume, copied into each claim's CSI call and (secrets) sealed at rest, so a megabyte of
 * secrets or a 100k-character external ID would cost every read, write and RPC of that volume.
 * The CSI spec bounds a string field to 128 bytes and a map<string,string> to 4 KiB unless a
 * field says otherwise; plugins in the wild exceed both (URI-shaped volume IDs, certificates or
 * kubeconfigs in secrets), so the bounds here leave room above the spec while refusing abuse:
 *
 * - ExternalID: 1,024 bytes (UTF-8).
 * - Name: 256 bytes (it is CreateVolume's `name`; the CSI spec gives 128).
 * - Secrets, Parameters, Context: per map at most 64 KiB of keys and values together, each key at
 *   most 256 bytes, each value at most 32 KiB.
 * - MountOptions.MountFlags: at most 64 flags of at most 256 bytes each.
 *
 * IDs (volume, namespace, plugin, job) are bounded by ids.ts (128 characters). A refusal is
 * ERR_VALIDATION (400) naming the field and the bound. Pure.
 */
import { validationError } from "./errors.js";

export const MAX_EXTERNAL_ID_BYTES = 1024;
export const MAX_VOLUME_NAME_BYTES = 256;
export const MAX_MAP_BYTES = 64 * 1024;
export const MAX_MAP_KEY_BYTES = 256;
export const MAX_MAP_VALUE_BYTES = 32 * 1024;
export const MAX_MOUNT_FLAGS = 64;
export const MAX_MOUNT_FLAG_BYTES = 256;

const bytes = (s: string) => Buffer.byteLength(s, "utf8");

/** Refuses `value` longer than `max` UTF-8 bytes, naming the field. */
export function checkBytes(field: string, value: string, max: number): void {
  const n = bytes(value);
  if (n > max) throw validationError(field, `must be at most ${max} bytes (it is ${n})`);
}

/** Refuses a Secrets/Parameters/Context map past the bounds above, naming the field or key. */
export function checkStringMap(field: string, map: Record<string, string>): void {
  let total = 0;
  for (const [k, v] of Object.entries(map)) {
    const kb = bytes(k);
    if (kb > MAX_MAP_KEY_BYTES)
      throw validationError(field, `a key must be at most ${MAX_MAP_KEY_BYTES} bytes (one is ${kb})`);
    // The value's size only: never the value itself (it may be a secret).
    checkBytes(`${field}.${k}`, v, MAX_MAP_VALUE_BYTES);
    total += kb + bytes(v);
  }
  if (total > MAX_MAP_BYTES)
    throw validationError(field, `must be at most ${MAX_MAP_BYTES} bytes in all (it is ${total})`);
}

/** Refuses too many mount flags or one too long. */
export function checkMountFlags(field: string, flags: readonly string[]): void {
  if (flags.length > MAX_MOUNT_FLAGS)
    throw validationError(field, `must hold at most ${MAX_MOUNT_FLAGS} flags (it holds ${flags.length})`);
  flags.forEach((f, i) => checkBytes(`${field}[${i}]`, f, MAX_MOUNT_FLAG_BYTES));
}
