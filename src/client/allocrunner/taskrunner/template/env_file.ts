/**
 * The `KEY=VALUE` lines of a template rendered with `env = true`, parsed as Nomad parses them
 * (hashicorp/go-envparse): one variable per line; blank lines skipped; `export ` before the key and
 * white space around key and value dropped; in an unquoted value `#` starts a comment (the white
 * space before it dropped); `"…"` with the escapes `\\ \" \n \t`, `'…'` literal; control characters
 * are an error, and so is a non-blank line without `=` (a line holding only a comment included:
 * go-envparse has no comment lines). Errors name the line: `error on line 3: missing "="`.
 */
export function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  // bufio.ScanLines: split on \n, drop one trailing \r, no empty last line after a final \n.
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  lines.forEach((raw, i) => {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    try {
      const kv = parseLine(line);
      if (kv) env[kv[0]] = kv[1];
    } catch (err) {
      throw new Error(`error on line ${i + 1}: ${(err as Error).message}`, { cause: err });
    }
  });
  return env;
}

const GO_SPACE = /^[ \t\n\v\f\r\u0085\u00a0]+|[ \t\n\v\f\r\u0085\u00a0]+$/g;

function parseLine(line: string): [string, string] | null {
  if (line.length === 0) return null;
  const eq = line.indexOf("=");
  if (eq < 0) throw new Error('missing "="');
  let key = line.slice(0, eq).replace(GO_SPACE, "");
  const value = line.slice(eq + 1).replace(GO_SPACE, "");
  if (key.startsWith("export ")) key = key.slice("export ".length);
  if (key.length === 0) throw new Error("empty key");
  if (!/^[A-Za-z_]/.test(key))
    throw new Error(`key must start with [A-Za-z_] but found ${goQuoteChar(key[0]!)}`);
  if (value.length === 0) return [key, ""];

  let out = "";
  let lastSig = 0;
  let mode: "normal" | "double" | "single" | "escape" = "normal";
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    if (code < 32) throw new Error(`0x${code.toString(16).padStart(2, "0")} is an invalid value character`);
    if (code > 127) {
      if (mode === "escape") throw new Error("multibyte characters disallowed in escape sequences");
      out += ch;
      lastSig = out.length;
      continue;
    }
    if (mode === "normal") {
      if (ch === '"') mode = "double";
      else if (ch === "'") mode = "single";
      else if (ch === "#") return [key, out.slice(0, lastSig)];
      else {
        out += ch;
        if (ch !== " " && ch !== "\t") lastSig = out.length;
      }
    } else if (mode === "double") {
      if (ch === '"') mode = "normal";
      else if (ch === "\\") mode = "escape";
      else {
        out += ch;
        lastSig = out.length;
      }
    } else if (mode === "escape") {
      const esc: Record<string, string> = { '"': '"', "\\": "\\", n: "\n", t: "\t" };
      if (!(ch in esc)) throw new Error(`invalid escape sequence: ${ch}`);
      out += esc[ch];
      lastSig = out.length;
      mode = "double";
    } else if (ch === "'") mode = "normal";
    else {
      out += ch;
      lastSig = out.length;
    }
  }
  if (mode === "double") throw new Error('unmatched "');
  if (mode === "single") throw new Error("unmatched '");
  if (mode === "escape") throw new Error("incomplete escape sequence");
  return [key, out];
}

/** Go's %q of a byte: 'x'. */
function goQuoteChar(c: string): string {
  return c === "'" ? "'\\''" : `'${c}'`;
}
