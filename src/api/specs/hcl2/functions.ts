/**
 * The functions a jobspec can call: the set Nomad's jobspec2/functions.go registers (cty's stdlib,
 * go-cty-funcs' encoding, crypto, uuid, cidr and filesystem functions), with cty's semantics. `try`,
 * `can` and `convert` need their arguments unevaluated and live in evaluate.ts. Filesystem functions
 * read relative to the jobspec's directory and only when the caller allows it (Nomad's AllowFS).
 * The few Nomad functions berth does not implement are refused by name, not as unknown.
 */
import { createHash, randomUUID } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, resolve } from "node:path";
import { type Value } from "./ast.js";
import type { HclFunction } from "./evaluate.js";
import { arity, collectionFunctions, fail } from "./functions_collections.js";
import { cidrFunctions } from "./functions_net.js";
import { formatFunctions } from "./functions_format.js";
import { toList, toNum, toStr } from "./values.js";

const str =
  (f: (s: string) => Value): HclFunction =>
  (a) => (arity(a, 1), f(toStr(a[0]!, "argument")));
const num =
  (f: (n: number) => Value): HclFunction =>
  (a) => (arity(a, 1), f(toNum(a[0]!, "argument")));
const hash = (alg: string): HclFunction => str((s) => createHash(alg).update(s).digest("hex"));

const stringFunctions: Record<string, HclFunction> = {
  upper: str((s) => s.toUpperCase()),
  lower: str((s) => s.toLowerCase()),
  title: str((s) =>
    s.replace(/(^|[^\p{L}\p{N}'])(\p{L})/gu, (_m, pre: string, c: string) => pre + c.toUpperCase()),
  ),
  strlen: str((s) => [...s].length),
  strrev: str((s) => [...s].reverse().join("")),
  chomp: str((s) => s.replace(/(?:\r?\n)+$/, "")),
  trimspace: str((s) => s.trim()),
  trim: (a) => {
    arity(a, 2);
    const cut = [...toStr(a[1]!, "cutset")];
    const chars = [...toStr(a[0]!, "string")];
    let i = 0;
    let j = chars.length;
    while (i < j && cut.includes(chars[i]!)) i++;
    while (j > i && cut.includes(chars[j - 1]!)) j--;
    return chars.slice(i, j).join("");
  },
  trimprefix: (a) => {
    arity(a, 2);
    const [s, p] = [toStr(a[0]!), toStr(a[1]!)];
    return s.startsWith(p) ? s.slice(p.length) : s;
  },
  trimsuffix: (a) => {
    arity(a, 2);
    const [s, p] = [toStr(a[0]!), toStr(a[1]!)];
    return p !== "" && s.endsWith(p) ? s.slice(0, -p.length) : s;
  },
  substr: (a) => {
    arity(a, 3);
    const chars = [...toStr(a[0]!, "string")];
    let off = toNum(a[1]!, "offset");
    const len = toNum(a[2]!, "length");
    if (off < 0) off = Math.max(0, chars.length + off);
    return chars.slice(off, len < 0 ? undefined : off + len).join("");
  },
  indent: (a) => {
    arity(a, 2);
    const pad = " ".repeat(toNum(a[0]!, "spaces"));
    return toStr(a[1]!, "string").replace(/\n/g, `\n${pad}`);
  },
  split: (a) => (arity(a, 2), toStr(a[1]!, "string").split(toStr(a[0]!, "separator"))),
  join: (a) => {
    arity(a, 2, -1);
    const sep = toStr(a[0]!, "separator");
    return a
      .slice(1)
      .flatMap((l, i) => toList(l, `list ${i + 1}`))
      .map((x) => {
        if (x === null) throw fail("element is null: cannot join a null value.");
        return toStr(x, "element");
      })
      .join(sep);
  },
  replace: (a) => (
    arity(a, 3),
    toStr(a[0]!, "string").split(toStr(a[1]!, "substring")).join(toStr(a[2]!, "replacement"))
  ),
  regex_replace: (a) => {
    arity(a, 3);
    let re: RegExp;
    try {
      re = new RegExp(toStr(a[1]!, "pattern"), "gu");
    } catch (err) {
      throw fail(`invalid regular expression: ${(err as Error).message}.`);
    }
    // Go's regexp expands $1 and ${1} in the replacement, as JavaScript's does.
    return toStr(a[0]!, "string").replace(re, toStr(a[2]!, "replacement").replace(/\$\{(\w+)\}/g, "$$$1"));
  },
};

const numericFunctions: Record<string, HclFunction> = {
  abs: num(Math.abs),
  ceil: num(Math.ceil),
  floor: num(Math.floor),
  signum: num(Math.sign),
  max: (a) => (arity(a, 1, -1), Math.max(...a.map((x) => toNum(x, "argument")))),
  min: (a) => (arity(a, 1, -1), Math.min(...a.map((x) => toNum(x, "argument")))),
  pow: (a) => (arity(a, 2), toNum(a[0]!, "base") ** toNum(a[1]!, "exponent")),
  log: (a) => (arity(a, 2), Math.log(toNum(a[0]!, "number")) / Math.log(toNum(a[1]!, "base"))),
  parseint: (a) => {
    arity(a, 2);
    const s = toStr(a[0]!, "number");
    const base = toNum(a[1]!, "base");
    if (!Number.isInteger(base) || base < 2 || base > 62)
      throw fail("base must be a whole number between 2 and 62 inclusive.");
    const digits = "0123456789abcdefghijklmnopqrstuvwxyz".slice(0, base);
    const body = s.replace(/^[-+]/, "");
    if (body === "" || [...body.toLowerCase()].some((c) => !digits.includes(c))) {
      throw fail(`cannot parse the string as a base ${base} integer.`);
    }
    const n = parseInt(body, base);
    return s.startsWith("-") ? -n : n;
  },
};

const encodingFunctions: Record<string, HclFunction> = {
  base64encode: str((s) => Buffer.from(s, "utf8").toString("base64")),
  base64decode: str((s) => {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) throw fail("failed to decode base64 data.");
    const out = Buffer.from(s, "base64");
    const text = out.toString("utf8");
    if (!Buffer.from(text, "utf8").equals(out))
      throw fail("the result of decoding the provided string is not valid UTF-8.");
    return text;
  }),
  urlencode: str((s) =>
    encodeURIComponent(s)
      .replace(/%20/g, "+")
      .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
  ),
  jsonencode: (a) => (arity(a, 1), JSON.stringify(a[0]!)),
  jsondecode: str((s) => {
    try {
      return JSON.parse(s) as Value;
    } catch {
      throw fail("the string is not valid JSON.");
    }
  }),
  csvdecode: str((s) => {
    const rows = s
      .split(/\r?\n/)
      .filter((l) => l !== "")
      .map((l) => l.split(","));
    const [head, ...rest] = rows;
    if (head === undefined) throw fail("missing header line.");
    return rest.map((r, i) => {
      if (r.length !== head.length) throw fail(`line ${i + 2}: wrong number of fields.`);
      return Object.fromEntries(head.map((h, j) => [h, r[j]!]));
    });
  }),
  md5: hash("md5"),
  sha1: hash("sha1"),
  sha256: hash("sha256"),
  sha512: hash("sha512"),
  uuidv4: (a) => (arity(a, 0), randomUUID()),
  uuidv5: (a) => {
    arity(a, 2);
    const spaces: Record<string, string> = {
      dns: "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
      url: "6ba7b811-9dad-11d1-80b4-00c04fd430c8",
      oid: "6ba7b812-9dad-11d1-80b4-00c04fd430c8",
      x500: "6ba7b814-9dad-11d1-80b4-00c04fd430c8",
    };
    const ns = spaces[toStr(a[0]!, "namespace")] ?? toStr(a[0]!);
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(ns))
      throw fail("uuidv5() doesn't support namespace that is not a UUID or dns, url, oid, x500.");
    const h = createHash("sha1")
      .update(Buffer.from(ns.replace(/-/g, ""), "hex"))
      .update(toStr(a[1]!, "name"))
      .digest();
    h[6] = (h[6]! & 0x0f) | 0x50;
    h[8] = (h[8]! & 0x3f) | 0x80;
    const x = h.subarray(0, 16).toString("hex");
    return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
  },
};

function fsFunctions(baseDir: string): Record<string, HclFunction> {
  const at = (p: string): string => resolve(baseDir, p.startsWith("~/") ? `${homedir()}${p.slice(1)}` : p);
  const read = (p: string): Buffer => {
    try {
      return readFileSync(at(p));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? "error";
      throw fail(`no file exists at ${JSON.stringify(p)} (${code}).`);
    }
  };
  return {
    file: str((p) => {
      const b = read(p);
      const text = b.toString("utf8");
      if (!Buffer.from(text, "utf8").equals(b))
        throw fail(
          `contents of ${JSON.stringify(p)} are not valid UTF-8; use the filebase64 function to obtain the Base64 encoded contents or the other file functions (e.g. filemd5, filesha256) to obtain file hashing results instead.`,
        );
      return text;
    }),
    filebase64: str((p) => read(p).toString("base64")),
    fileexists: str((p) => {
      if (!existsSync(at(p))) return false;
      if (!statSync(at(p)).isFile())
        throw fail(`${JSON.stringify(p)} is not a regular file, but a directory or another kind of file.`);
      return true;
    }),
    abspath: str((p) => (isAbsolute(p) ? p : resolve(p))),
    basename: str((p) => basename(p)),
    dirname: str((p) => dirname(p)),
    pathexpand: str((p) => (p === "~" ? homedir() : p.startsWith("~/") ? `${homedir()}${p.slice(1)}` : p)),
  };
}

const FS_NAMES = [
  "file",
  "filebase64",
  "fileexists",
  "fileset",
  "abspath",
  "basename",
  "dirname",
  "pathexpand",
];
/** Nomad registers these; berth does not implement them (they need libraries berth does not ship). */
const NOT_IMPLEMENTED = ["bcrypt", "rsadecrypt", "yamldecode", "yamlencode", "fileset"];

/**
 * The functions for one jobspec. `baseDir` is the jobspec's directory; without it (`allowFS` false,
 * as for a spec that is not a local file) the filesystem functions fail as Nomad's do when disabled.
 */
export function jobspecFunctions(baseDir: string | undefined): Map<string, HclFunction> {
  const fns = new Map<string, HclFunction>(
    Object.entries({
      ...stringFunctions,
      ...numericFunctions,
      ...encodingFunctions,
      ...collectionFunctions,
      ...formatFunctions,
      ...cidrFunctions,
    }),
  );
  if (baseDir !== undefined) for (const [k, f] of Object.entries(fsFunctions(baseDir))) fns.set(k, f);
  else
    for (const k of FS_NAMES)
      fns.set(k, () => {
        throw fail("filesystem functions disabled.");
      });
  for (const k of NOT_IMPLEMENTED) {
    fns.set(k, () => {
      throw fail(`berth does not implement ${k}(); write the value in the jobspec instead.`);
    });
  }
  return fns;
}
