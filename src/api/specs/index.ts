/**
 * Jobspecs and volume specs, in HCL or in JSON. The format is told by content, not by file name:
 * text that parses as JSON is JSON (HCL is never valid JSON at the top level). JSON is either the
 * API's shape (PascalCase, as `-json` prints it) or HCL's JSON syntax (the HCL keys: `job`, `id`…).
 */
import { SpecError } from "./body.js";
import type { HclInputs } from "./hcl.js";
import { parseJobHcl, parseJobJsonSyntax } from "./jobspec.js";
import { parseVolumeHcl, type VolumeSpecOptions } from "./volumespec.js";
import type { CSIVolumeSpec, Job } from "../types.js";

export { SpecError } from "./body.js";
export type { HclInputs } from "./hcl.js";
export type { VolumeSpecOptions } from "./volumespec.js";
export { Hcl1Error } from "../../hcl1/index.js";
export { parseDuration } from "./duration.js";
export { parseSize } from "./size.js";

function tryJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * A job from `file`'s text. API-shaped JSON, `{"Job": {...}}` or the bare job, is sent as written
 * (the server validates it).
 */
export async function parseJobSpec(file: string, text: string, inputs: HclInputs = {}): Promise<Job> {
  const json = tryJson(text);
  if (!json.ok) return parseJobHcl(file, text, inputs);
  const v = json.value;
  // HCL's JSON syntax: the HCL form's language, its strings templates.
  if (isObj(v) && "job" in v) return parseJobJsonSyntax(file, text, v, inputs);
  const job = isObj(v) && "Job" in v ? v.Job : v;
  if (!isObj(job)) throw new SpecError(`${file}: a JSON jobspec must be a job object or {"Job": {...}}`);
  return job as unknown as Job;
}

/**
 * A volume from `file`'s text. API-shaped JSON, `{"Volumes": [vol]}` with one volume or the bare
 * volume object, is sent as written; JSON with a lowercase key is HCL's JSON form (what
 * `volume init -json` writes) and decodes exactly as the HCL would; anything else is HCL 1, read as
 * Nomad reads volume specs (volumespec.ts). `warn` hears about keys Nomad ignores.
 */
export async function parseVolumeSpec(
  file: string,
  text: string,
  opts: VolumeSpecOptions = {},
): Promise<CSIVolumeSpec> {
  const json = tryJson(text);
  if (!json.ok) return parseVolumeHcl(file, text, opts);
  const v = json.value;
  if (isObj(v) && Object.keys(v).some((k) => /^[a-z]/.test(k))) return parseVolumeHcl(file, text, opts);
  let vol: unknown = v;
  if (isObj(v) && "Volumes" in v) {
    if (!Array.isArray(v.Volumes) || v.Volumes.length !== 1) {
      throw new SpecError(`${file}: "Volumes" must hold exactly one volume`);
    }
    vol = v.Volumes[0];
  }
  if (!isObj(vol)) {
    throw new SpecError(`${file}: a JSON volume spec must be a volume object or {"Volumes": [...]}`);
  }
  return vol;
}
