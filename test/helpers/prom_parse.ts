/**
 * Parses a Prometheus text exposition with a real library's parser: Debian's python3-prometheus-client
 * (`prometheus_client.parser.text_string_to_metric_families`), run as a subprocess. Returns its
 * families as it sees them (name without `_total` for counters, type, samples with labels), so a
 * test asserts on what a Prometheus client reads, not on berth's own idea of the format. A text the
 * parser rejects makes it throw with the parser's error.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";

export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PromFamily {
  name: string;
  type: string;
  help: string;
  samples: PromSample[];
}

const SCRIPT = `
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for f in text_string_to_metric_families(sys.stdin.read()):
    out.append({"name": f.name, "type": f.type, "help": f.documentation,
                "samples": [{"name": s.name, "labels": s.labels, "value": s.value} for s in f.samples]})
json.dump(out, sys.stdout)
`;

/** Debian's interpreter, whose dist-packages hold the library (a python3 earlier on PATH may not). */
const PYTHON = fs.existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";

export function parseExposition(text: string): PromFamily[] {
  const out = execFileSync(PYTHON, ["-c", SCRIPT], { input: text, encoding: "utf8", timeout: 30_000 });
  return JSON.parse(out) as PromFamily[];
}

export function family(families: PromFamily[], name: string): PromFamily {
  const f = families.find((x) => x.name === name);
  if (!f) throw new Error(`no metric family ${name} (have ${families.map((x) => x.name).join(", ")})`);
  return f;
}
