/**
 * What `tls ca create` and `tls cert create` share: their flags' checks, and writing a certificate
 * and its key beside each other without ever replacing a file (Nomad refuses when one exists). A key
 * is written 0600 (owner only), a certificate 0644.
 */
import fs from "node:fs/promises";
import { UsageError } from "../flags.js";

/** `-days`: whole days, 1 to 100 years. */
export function daysFlag(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1 || n > 36_500) {
    throw new UsageError(
      `-days must be a whole number of days from 1 to 36500, got ${JSON.stringify(value)}`,
    );
  }
  return n;
}

/** A DNS label sequence for -domain/-region: what a certificate name may hold. */
export function dnsPart(flag: string, value: string): string {
  if (!/^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(value)) {
    throw new UsageError(`${flag} ${JSON.stringify(value)} is not a DNS name`);
  }
  return value;
}

/** Refuses before anything is written when either file exists: never half a pair. */
export async function assertAbsent(files: { path: string; what: string }[]): Promise<void> {
  for (const f of files) {
    const exists = await fs
      .lstat(f.path)
      .then(() => true)
      .catch(() => false);
    if (exists) throw new Error(`${f.what} file '${f.path}' already exists`);
  }
}

/** Creates `path` (never over an existing file) with `mode`. */
export async function writeNew(path: string, text: string, mode: number): Promise<void> {
  await fs.writeFile(path, text, { flag: "wx", mode });
  // The process umask may have narrowed a certificate's mode; a key's 0600 is never widened by it.
  await fs.chmod(path, mode);
}

export const CERT_MODE = 0o644;
export const KEY_MODE = 0o600;

/** The X.509 code (tls_generate.ts), loaded only when a certificate is made, not with every command. */
export function generator(): Promise<typeof import("./tls_generate.js")> {
  return import("./tls_generate.js");
}
