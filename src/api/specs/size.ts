/**
 * Byte sizes as Nomad's volume specs write them (go-humanize's ParseBytes): "10MiB" and "1GiB" are
 * powers of 1024, "500M", "1G", "1GB" powers of 1000, a bare number is bytes; units are
 * case-insensitive and may follow a space.
 */
const UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  kib: 2 ** 10,
  m: 1e6,
  mb: 1e6,
  mib: 2 ** 20,
  g: 1e9,
  gb: 1e9,
  gib: 2 ** 30,
  t: 1e12,
  tb: 1e12,
  tib: 2 ** 40,
  p: 1e15,
  pb: 1e15,
  pib: 2 ** 50,
};

/** Bytes in `text`, or undefined when it is not a size. */
export function parseSize(text: string): number | undefined {
  const m = /^(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)$/i.exec(text.trim());
  if (!m) return undefined;
  const unit = UNITS[m[2]!.toLowerCase()];
  if (unit === undefined) return undefined;
  return Math.floor(Number(m[1]) * unit);
}
