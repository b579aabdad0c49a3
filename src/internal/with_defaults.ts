/**
 * Options laid over their defaults. A key given as `undefined` means "the default", exactly as an
 * absent key does — so callers may pass `{ timeoutMs: opts.timeoutMs }` without a conditional
 * spread, and `{ ...DEFAULTS, ...given }` (where an undefined would erase a default) is not needed.
 */
export function withDefaults<T extends object>(defaults: T, given: Partial<T> | undefined): T {
  const out: T = { ...defaults };
  if (given === undefined) return out;
  for (const [key, value] of Object.entries(given)) {
    if (value !== undefined) (out as Record<string, unknown>)[key] = value;
  }
  return out;
}
