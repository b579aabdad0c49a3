/**
 * A task's `Templates` in Nomad's JSON → canonical templates, as Nomad's `Template.Canonicalize`
 * (change_mode "restart", perms "0644", splay 5s, `{{`/`}}` delimiters, change_signal upper-cased,
 * SIGHUP for change_mode "signal") and `Template.Validate` (its texts) do. The destination is
 * checked not to escape the alloc dir (job_paths_validate.ts). Pure.
 */
import { validationError } from "./errors.js";
import { checkFields, TEMPLATE_FIELDS } from "./job_fields.js";
import { NS_PER_S } from "./job.js";
import { checkTemplateDest } from "./job_paths_validate.js";
import type { Template } from "./job_stanzas.js";
import { asObject, optArray, optBool, optNumber, optString } from "./json_check.js";
import { keptObject } from "./kept_validate.js";

export const TEMPLATE_CHANGE_MODES = ["noop", "restart", "signal", "script"] as const;

const OCTAL_PERMS = /^[0-7]{1,4}$/;

export function templates(field: string, input: unknown): Template[] {
  return optArray(field, input).map((t, i) => template(`${field}[${i}]`, t));
}

function template(field: string, input: unknown): Template {
  const t = asObject(field, input);
  checkFields(field, t, TEMPLATE_FIELDS);
  const str = (k: string, d: string) => optString(`${field}.${k}`, t[k], d);
  const ChangeMode = str("ChangeMode", "restart");
  const signal = t.ChangeSignal;
  const ChangeSignal =
    signal === undefined || signal === null
      ? ChangeMode === "signal"
        ? "SIGHUP"
        : ""
      : str("ChangeSignal", "").toUpperCase();
  const out: Template = {
    SourcePath: str("SourcePath", ""),
    DestPath: str("DestPath", ""),
    EmbeddedTmpl: str("EmbeddedTmpl", ""),
    ChangeMode,
    ChangeSignal,
    Splay: optNumber(`${field}.Splay`, t.Splay, 5 * NS_PER_S, { integer: true }),
    Perms: str("Perms", "0644"),
    LeftDelim: str("LeftDelim", "{{"),
    RightDelim: str("RightDelim", "}}"),
    Envvars: optBool(`${field}.Envvars`, t.Envvars, false),
    ErrMissingKey: optBool(`${field}.ErrMissingKey`, t.ErrMissingKey, false),
    Once: optBool(`${field}.Once`, t.Once, false),
    VaultGrace: optNumber(`${field}.VaultGrace`, t.VaultGrace, 0, { integer: true, min: 0 }),
    ChangeScript: keptObject(`${field}.ChangeScript`, t.ChangeScript),
    Wait: keptObject(`${field}.Wait`, t.Wait),
  };
  for (const k of ["Uid", "Gid"] as const) {
    if (t[k] !== undefined && t[k] !== null) out[k] = optNumber(`${field}.${k}`, t[k], 0, { integer: true });
  }
  checkTemplate(field, out);
  return out;
}

/** Nomad's Template.Validate: the rules that hold across the fields of a decoded template. */
function checkTemplate(field: string, out: Template): void {
  if (out.SourcePath === "" && out.EmbeddedTmpl === "") {
    throw validationError(field, "Must specify a source path or have an embedded template");
  }
  if (out.DestPath === "")
    throw validationError(`${field}.DestPath`, "Must specify a destination for the template");
  checkTemplateDest(`${field}.DestPath`, out.DestPath);
  if (!(TEMPLATE_CHANGE_MODES as readonly string[]).includes(out.ChangeMode)) {
    throw validationError(
      `${field}.ChangeMode`,
      "Invalid change mode. Must be one of the following: noop, signal, script, restart",
    );
  }
  if (out.ChangeMode === "signal" && out.ChangeSignal === "") {
    throw validationError(`${field}.ChangeSignal`, "Must specify signal value when change mode is signal");
  }
  if (out.ChangeMode === "signal" && out.Envvars) {
    throw validationError(`${field}.Envvars`, "cannot use signals with env var templates");
  }
  if (out.ChangeMode === "script" && !out.ChangeScript) {
    throw validationError(
      `${field}.ChangeScript`,
      "must specify change script configuration value when change mode is script",
    );
  }
  if (out.Splay < 0) throw validationError(`${field}.Splay`, "Must specify positive splay value");
  if (out.Perms !== "" && !OCTAL_PERMS.test(out.Perms)) {
    throw validationError(`${field}.Perms`, `Failed to parse ${JSON.stringify(out.Perms)} as octal`);
  }
}
