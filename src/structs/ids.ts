import { randomUUID } from "node:crypto";
import path from "node:path";
import { BerthError, validationError } from "./errors.js";

/**
 * IDs (volume, plugin, job, namespace, node) become path segments on nodes, so the rule is strict:
 * a letter, digit or underscore first, then letters, digits, `_ . -` and the `[N]` suffix that
 * per_alloc volumes use; at most 128 characters. `..`, `/` and NUL can never appear.
 */
const ID_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.\-[\]]{0,127}$/;

export function checkId(field: string, value: unknown): string {
  if (typeof value !== "string" || value === "") throw validationError(field, "is required");
  if (!ID_PATTERN.test(value) || value.includes("..")) {
    throw validationError(
      field,
      `${JSON.stringify(value)} is not a valid ID (letters, digits, '_', '-', '.', '[N]'; at most 128 characters; no '..' or '/')`,
    );
  }
  return value;
}

export function isValidId(value: string): boolean {
  return ID_PATTERN.test(value) && !value.includes("..");
}

export function newUuid(): string {
  return randomUUID();
}

/**
 * Joins segments under base and proves the result stays inside it. Every path built from an ID
 * goes through here, so a hostile ID can at worst be refused, never escape the data dir.
 */
export function safeJoin(base: string, ...segments: string[]): string {
  const root = path.resolve(base);
  const joined = path.resolve(root, ...segments);
  if (joined !== root && !joined.startsWith(root + path.sep)) {
    throw new BerthError("ERR_VALIDATION", `path ${JSON.stringify(segments.join("/"))} escapes ${root}`);
  }
  return joined;
}
