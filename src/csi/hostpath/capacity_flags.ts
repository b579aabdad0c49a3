/** csi-hostpath's capacity flags (capacity.ts says what they mean); no imports, so flags.ts stays a leaf. */

export interface HostpathCapacity {
  /** Total bytes of every segment (`--capacity`); null: none given. */
  total: number | null;
  /** Totals of the segments with key=value (`--capacity-KEY=VALUE=BYTES`). */
  segments: { key: string; value: string; bytes: number }[];
}

/** Handles `--capacity` / `--capacity-KEY=VALUE=BYTES` (name without the dashes); false for any other flag. */
export function capacityFlag(into: HostpathCapacity, name: string, value: () => string): boolean {
  if (name === "capacity") {
    into.total = bytesOf(name, value());
    return true;
  }
  if (!name.startsWith("capacity-")) return false;
  const key = name.slice("capacity-".length);
  const v = value();
  const eq = v.lastIndexOf("=");
  if (!key || eq <= 0) throw new Error(`--capacity-KEY=VALUE=BYTES: bad ${JSON.stringify(`--${name}=${v}`)}`);
  into.segments.push({ key, value: v.slice(0, eq), bytes: bytesOf(name, v.slice(eq + 1)) });
  return true;
}

function bytesOf(name: string, v: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`--${name}: bad number of bytes ${v}`);
  return n;
}
