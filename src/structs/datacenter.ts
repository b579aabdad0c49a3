/**
 * Datacenter patterns as Nomad matches them (Node.IsInAnyDC, with ryanuber/go-glob): `*` stands
 * for any run of characters, the empty run included; nothing else is special; a pattern without
 * `*` matches its own text only. Nomad's default for a job that names none is `["*"]` (since 1.5).
 * Pure, with no backtracking: each literal part is found once, leftmost, after the one before it
 * (for `*`-only globs the leftmost match is always a right choice), so a match costs at most the
 * name's length times the pattern's, and both are short operator-written names.
 */

/** Nomad's default `datacenters` for a job that names none. */
export const DEFAULT_DATACENTERS: readonly string[] = ["*"];

export function datacenterMatches(pattern: string, dc: string): boolean {
  if (!pattern.includes("*")) return pattern === dc;
  const parts = pattern.split("*");
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (!dc.startsWith(first)) return false;
  let at = first.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const found = dc.indexOf(parts[i]!, at);
    if (found < 0) return false;
    at = found + parts[i]!.length;
  }
  // The last part must end the name, and must not overlap what the parts before it took.
  return dc.length - last.length >= at && dc.endsWith(last);
}

/** Whether the node's datacenter matches one of the job's patterns. */
export function inAnyDatacenter(patterns: readonly string[], dc: string): boolean {
  return patterns.some((p) => datacenterMatches(p, dc));
}
