/**
 * The ContentType of Nomad's `alloc fs -stat` (client/allocdir detectContentType): a best-effort
 * guess from a file's first 512 bytes, as Go's http.DetectContentType, reduced to the signatures an
 * alloc dir holds in practice (HTML, XML, PDF, PNG, JPEG, GIF, gzip, zip; text vs. binary by Go's
 * "binary byte" rule); a name ending in ".json" is application/json whatever it holds, as Nomad's.
 * A directory, or a file that cannot be read or is empty, is application/octet-stream.
 */
export const SNIFF_LEN = 512;

const OCTET = "application/octet-stream";

const MAGIC: [string | number[], string][] = [
  ["%PDF-", "application/pdf"],
  [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "image/png"],
  [[0xff, 0xd8, 0xff], "image/jpeg"],
  ["GIF87a", "image/gif"],
  ["GIF89a", "image/gif"],
  [[0x1f, 0x8b, 0x08], "application/x-gzip"],
  [[0x50, 0x4b, 0x03, 0x04], "application/zip"],
];

const HTML_TAGS = ["<!doctype html", "<html", "<head", "<body", "<script", "<title", "<p", "<div"];

function startsWith(data: Uint8Array, sig: string | number[]): boolean {
  const bytes = typeof sig === "string" ? [...sig].map((c) => c.charCodeAt(0)) : sig;
  return bytes.length <= data.length && bytes.every((b, i) => data[i] === b);
}

/** Go's binary-data bytes: control characters other than TAB, LF, FF, CR, ESC. */
function isBinaryByte(b: number): boolean {
  return b <= 0x08 || b === 0x0b || (b >= 0x0e && b <= 0x1a) || (b >= 0x1c && b <= 0x1f);
}

export function sniffContentType(name: string, isDir: boolean, head: Uint8Array | null): string {
  if (name.endsWith(".json")) return "application/json";
  if (isDir || head === null || head.length === 0) return OCTET;
  const data = head.subarray(0, SNIFF_LEN);
  for (const [sig, type] of MAGIC) if (startsWith(data, sig)) return type;
  let i = 0;
  while (i < data.length && [0x09, 0x0a, 0x0c, 0x0d, 0x20].includes(data[i]!)) i++;
  const text = Buffer.from(data.subarray(i, i + 16))
    .toString("latin1")
    .toLowerCase();
  const tagEnd = (tag: string) => {
    const next = text.charAt(tag.length);
    return text.startsWith(tag) && (next === " " || next === ">");
  };
  if (HTML_TAGS.some(tagEnd)) return "text/html; charset=utf-8";
  if (text.startsWith("<?xml")) return "text/xml; charset=utf-8";
  return data.some(isBinaryByte) ? OCTET : "text/plain; charset=utf-8";
}
