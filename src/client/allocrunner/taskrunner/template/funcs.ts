/**
 * The functions a Nomad template can call: Go's text/template builtins and consul-template's helpers
 * that need no server (argument orders as consul-template's, so that `{{ "a,b" | split "," }}` and
 * `{{ 5 | subtract 2 }}` read as they do there), with `env` reading the task's environment as Nomad
 * builds it (the task env, NOMAD_*, and `node.*`/`attr.*`/`meta.*`; an unknown name is "", as
 * Nomad masks the agent's own environment).
 *
 * consul-template's Consul, Vault and Nomad lookups (`key`, `service`, `secret`, `nomadVar`, …) exist
 * as names so that a template using them parses, and fail when called: berth has no Consul, Vault or
 * Nomad variables to read them from. Functions Nomad disables by default (`executeTemplate`,
 * `plugin`, `writeToFile`) fail as consul-template's denied ones do.
 */
import { createHash, createHmac } from "node:crypto";
import type { TemplateFunc } from "../../../../gotemplate/exec.js";
import { toJson, type Value } from "../../../../gotemplate/values.js";
import { goFuncTable, num, str } from "../../../../gotemplate/builtins.js";
import { addCollectionFuncs } from "./funcs_collections.js";

export interface FuncEnv {
  /** The task's environment and node variables, as `env` reads them. */
  env: Readonly<Record<string, string>>;
  now?: () => Date;
}

const NEEDS_SERVER = [
  "datacenters",
  "exportedServices",
  "key",
  "keyExists",
  "keyOrDefault",
  "ls",
  "safeLs",
  "node",
  "nodes",
  "partitions",
  "peerings",
  "secret",
  "secrets",
  "service",
  "connect",
  "services",
  "tree",
  "safeTree",
  "caRoots",
  "caLeaf",
  "pkiCert",
  "nomadServices",
  "nomadService",
  "nomadVarList",
  "nomadVarListSafe",
  "nomadVar",
  "nomadVarExists",
];

/** Nomad's default `function_denylist`. */
const DENIED = ["executeTemplate", "plugin", "writeToFile"];

/** consul-template helpers berth does not implement (YAML/TOML, Consul data sorting, debugging). */
const NOT_IMPLEMENTED = [
  "file",
  "scratch",
  "byKey",
  "byTag",
  "byPort",
  "byMeta",
  "explode",
  "explodeMap",
  "mergeMap",
  "mergeMapWithOverride",
  "parseYAML",
  "toYAML",
  "toTOML",
  "sockaddr",
  "spew_dump",
  "spew_printf",
  "spew_sdump",
  "spew_sprintf",
  "call",
];

export function templateFuncs(fe: FuncEnv): Map<string, TemplateFunc> {
  const { funcs: f, def } = goFuncTable();
  for (const name of NEEDS_SERVER) {
    f.set(name, () => {
      throw new Error(
        `${name} reads from Consul, Vault or Nomad variables; berth has no Consul, Vault or Nomad variables`,
      );
    });
  }
  for (const name of DENIED) {
    f.set(name, () => {
      throw new Error("function is disabled");
    });
  }
  for (const name of NOT_IMPLEMENTED) {
    f.set(name, () => {
      throw new Error(`berth's template renderer does not implement ${name}`);
    });
  }

  // Environment: the task's env and the node's variables.
  def("env", 1, ([k]) => fe.env[str(k)] ?? "");
  def("mustEnv", 1, ([k]) => {
    const v = fe.env[str(k)];
    if (v === undefined) throw new Error(`environment variable ${str(k)} is not set`);
    return v;
  });
  def("envOrDefault", 2, ([k, d]) => fe.env[str(k)] ?? str(d));

  // Strings.
  def("toLower", 1, ([s]) => str(s).toLowerCase());
  def("toUpper", 1, ([s]) => str(s).toUpperCase());
  def("toTitle", 1, ([s]) =>
    str(s).replace(/(^|[^\p{L}\p{N}_'])(\p{L})/gu, (_, a: string, b: string) => a + b.toUpperCase()),
  );
  def("trimSpace", 1, ([s]) => str(s).trim());
  def("trim", 2, ([cut, s]) => trimSet(str(s), str(cut), true, true));
  def("trimPrefix", 2, ([p, s]) => (str(s).startsWith(str(p)) ? str(s).slice(str(p).length) : str(s)));
  def("trimSuffix", 2, ([p, s]) =>
    str(p) !== "" && str(s).endsWith(str(p)) ? str(s).slice(0, -str(p).length) : str(s),
  );
  def("split", 2, ([sep, s]) => (str(s) === "" ? [] : str(s).split(str(sep))));
  def("replaceAll", 3, ([from, to, s]) => str(s).replaceAll(str(from), str(to)));
  def("regexMatch", 2, ([re, s]) => new RegExp(str(re)).test(str(s)));
  def("regexReplaceAll", 3, ([re, to, s]) =>
    str(s).replace(new RegExp(str(re), "g"), str(to).replace(/\$\{(\w+)\}/g, "$<$1>")),
  );
  def("indent", 2, ([n, s]) => {
    if (num(n) < 0) throw new Error("indent value must be a positive integer");
    const pad = " ".repeat(num(n));
    return str(s)
      .split("\n")
      .map((l) => pad + l)
      .join("\n");
  });

  // Encodings and hashes.
  def("base64Encode", 1, ([s]) => Buffer.from(str(s)).toString("base64"));
  def("base64Decode", 1, ([s]) => decode64(str(s), "base64"));
  def("base64URLEncode", 1, ([s]) => Buffer.from(str(s)).toString("base64url"));
  def("base64URLDecode", 1, ([s]) => decode64(str(s), "base64url"));
  def("sha256Hex", 1, ([s]) => createHash("sha256").update(str(s)).digest("hex"));
  def("md5sum", 1, ([s]) => createHash("md5").update(str(s)).digest("hex"));
  def("hmacSHA256Hex", 2, ([msg, key]) => createHmac("sha256", str(key)).update(str(msg)).digest("hex"));
  def("toJSON", 1, ([v]) => toJson(v));
  def("toJSONPretty", 1, ([v]) => toJson(v, "  "));
  def("toUnescapedJSON", 1, ([v]) => toJson(v, "", true));
  def("toUnescapedJSONPretty", 1, ([v]) => toJson(v, "  ", true));
  def("parseJSON", 1, ([s]) => (str(s) === "" ? {} : (JSON.parse(str(s)) as Value)));

  // Time: consul-template's `timestamp` (RFC 3339 in UTC, "unix", or a Go layout).
  def("timestamp", [0, 1], ([layout]) => {
    const now = (fe.now ?? (() => new Date()))();
    if (layout === undefined) return now.toISOString().replace(/\.\d{3}Z$/, "Z");
    if (str(layout) === "unix") return String(Math.floor(now.getTime() / 1000));
    return goTimeFormat(now, str(layout));
  });

  addCollectionFuncs(def);
  return f;
}

function trimSet(s: string, cut: string, left: boolean, right: boolean): string {
  const chars = new Set(cut);
  const arr = [...s];
  let a = 0;
  let b = arr.length;
  while (left && a < b && chars.has(arr[a]!)) a++;
  while (right && b > a && chars.has(arr[b - 1]!)) b--;
  return arr.slice(a, b).join("");
}

function decode64(s: string, enc: "base64" | "base64url"): string {
  const re = enc === "base64" ? /^[A-Za-z0-9+/]*={0,2}$/ : /^[A-Za-z0-9_-]*={0,2}$/;
  if (!re.test(s) || s.replace(/=+$/, "").length % 4 === 1) throw new Error("illegal base64 data");
  return Buffer.from(s, enc).toString("utf8");
}

/** Go's time.Format for the layout elements people write (reference time Mon Jan 2 15:04:05 MST 2006). */
export function goTimeFormat(d: Date, layout: string): string {
  const p2 = (n: number): string => String(n).padStart(2, "0");
  const MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
  ];
  const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
  const h = d.getUTCHours();
  const tokens: [string, () => string][] = [
    ["2006", () => String(d.getUTCFullYear())],
    ["January", () => MONTHS[d.getUTCMonth()]!],
    ["Jan", () => MONTHS[d.getUTCMonth()]!.slice(0, 3)],
    ["Monday", () => DAYS[d.getUTCDay()]!],
    ["Mon", () => DAYS[d.getUTCDay()]!.slice(0, 3)],
    ["MST", () => "UTC"],
    ["Z07:00", () => "Z"],
    ["-07:00", () => "+00:00"],
    ["-0700", () => "+0000"],
    [".000", () => `.${String(d.getUTCMilliseconds()).padStart(3, "0")}`],
    ["01", () => p2(d.getUTCMonth() + 1)],
    ["02", () => p2(d.getUTCDate())],
    ["06", () => p2(d.getUTCFullYear() % 100)],
    ["15", () => p2(h)],
    ["03", () => p2(h % 12 || 12)],
    ["04", () => p2(d.getUTCMinutes())],
    ["05", () => p2(d.getUTCSeconds())],
    ["PM", () => (h >= 12 ? "PM" : "AM")],
    ["pm", () => (h >= 12 ? "pm" : "am")],
    ["_2", () => String(d.getUTCDate()).padStart(2, " ")],
    ["1", () => String(d.getUTCMonth() + 1)],
    ["2", () => String(d.getUTCDate())],
    ["3", () => String(h % 12 || 12)],
    ["4", () => String(d.getUTCMinutes())],
    ["5", () => String(d.getUTCSeconds())],
  ];
  let out = "";
  let i = 0;
  outer: while (i < layout.length) {
    for (const [tok, fn] of tokens) {
      if (layout.startsWith(tok, i)) {
        out += fn();
        i += tok.length;
        continue outer;
      }
    }
    out += layout[i++];
  }
  return out;
}
