/**
 * Input variables and locals of a jobspec, as Nomad's jobspec2 defines them (types.variables.go,
 * types.config.go): `variable "name" { type, default, description, validation { condition,
 * error_message } }` and `variables { name = default }` blocks; values from, lowest precedence
 * first, the default, `NOMAD_VAR_<name>` in the environment, `-var-file` files in order, `-var`
 * flags; every declared variable must end up with a value; each `validation` checks the value that
 * won. `locals` blocks (any number) define `local.<name>`, evaluated in dependency order.
 *
 * Error texts are Nomad's diagnostics (summary; detail). No error shows a variable's value: a
 * value may be a secret (berth also accepts `sensitive = true`, which it needs for nothing more).
 */
import { SpecError } from "../body.js";
import { HclError, type Value } from "./ast.js";
import { evalDecoded, evalString, lineOf, located, templateOf, type Source } from "./decoded.js";
import { type HclFunction, type Scope } from "./evaluate.js";
import { convert, typeFromExpr, typeOfValue, type HclType } from "./types.js";
import { setKey, type Obj } from "./values.js";

const VAR_ATTRS = new Set(["type", "default", "description", "validation", "sensitive"]);
const IDENT = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const UNSET_DETAIL =
  "A used variable must be set or have a default value; see https://www.nomadproject.io/docs/job-specification/hcl2/variables for details.";

interface Assignment {
  from: "default" | "env" | "varfile" | "cmd";
  value: Value;
}

interface Validation {
  condition: string;
  message: string;
  line: string;
}

export interface Variable {
  name: string;
  type?: HclType;
  values: Assignment[];
  validations: Validation[];
}

/** Evaluation without a context, as HCL evaluates defaults and -var values: literals only. */
export const NO_CONTEXT: Scope = { roots: new Map(), functions: null };

export function err(src: Source, near: string, summary: string, detail: string): SpecError {
  return new SpecError(`${src.file}${lineOf(src.text, near)}: ${summary}; ${detail}`);
}

type Decoded = Record<string, unknown>;

export function isRecord(v: unknown): v is Decoded {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function blockBodies(v: unknown): Decoded[] {
  return (Array.isArray(v) ? (v as unknown[]) : [v]).filter(isRecord);
}

/** The declared variables with their defaults and validation rules (not yet their inputs). */
export function declareVariables(src: Source, decoded: Decoded): Map<string, Variable> {
  const vars = new Map<string, Variable>();
  const declare = (name: string, near: string): Variable => {
    if (vars.has(name))
      throw err(src, near, "Duplicate variable", `Duplicate ${name} variable definition found.`);
    if (!IDENT.test(name))
      throw err(
        src,
        near,
        "Invalid variable name",
        "A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.",
      );
    const v: Variable = { name, values: [], validations: [] };
    vars.set(name, v);
    return v;
  };
  // hcl2json gives {name: [body]}; HCL's JSON syntax may also write a list of such objects.
  const labelled = blockBodies(decoded.variable ?? []).flatMap((o) => Object.entries(o));
  for (const [name, bodies] of labelled) {
    for (const body of blockBodies(bodies)) {
      const v = declare(name, `variable "${name}"`);
      const field = `variable "${name}"`;
      for (const k of Object.keys(body)) {
        if (!VAR_ATTRS.has(k))
          throw err(
            src,
            `variable "${name}"`,
            "Unsupported argument",
            `An argument named ${JSON.stringify(k)} is not expected here.`,
          );
      }
      if (body.type !== undefined) v.type = typeOf(src, body.type, `${field}.type`);
      if (body.default !== undefined) {
        let value = evalDecoded(src, body.default, [field, "default"], NO_CONTEXT) as Value;
        if (v.type) {
          try {
            value = convert(value, v.type);
          } catch (e) {
            throw err(
              src,
              `variable "${name}"`,
              "Invalid default value for variable",
              `This default value is not compatible with the variable's type constraint: ${(e as Error).message}.`,
            );
          }
        } else v.type = typeOfValue(value);
        v.values.push({ from: "default", value });
      }
      for (const vb of blockBodies(body.validation ?? [])) v.validations.push(validation(src, name, vb));
    }
  }
  for (const body of blockBodies(decoded.variables ?? [])) {
    for (const [name, def] of Object.entries(body)) {
      const value = evalDecoded(src, def, ["variables", name], NO_CONTEXT) as Value;
      declare(name, name).values.push({ from: "default", value });
      vars.get(name)!.type = typeOfValue(value);
    }
  }
  return vars;
}

function typeOf(src: Source, raw: unknown, field: string): HclType {
  if (typeof raw !== "string")
    throw err(
      src,
      field,
      "Invalid type specification",
      "A type specification is either a primitive type keyword (bool, number, string) or a complex type constructor call, like list(string).",
    );
  const node = templateOf(src, raw, field);
  const only = node.k === "tmpl" && node.parts.length === 1 ? node.parts[0] : undefined;
  if (only?.k !== "interp")
    throw err(
      src,
      raw,
      "Invalid type specification",
      "A type specification is either a primitive type keyword (bool, number, string) or a complex type constructor call, like list(string).",
    );
  try {
    return typeFromExpr(only.x);
  } catch (e) {
    throw located(src, raw, field, e);
  }
}

function validation(src: Source, name: string, body: Decoded): Validation {
  const where = `variable "${name}"`;
  const { condition, error_message: message } = body;
  if (typeof condition !== "string")
    throw err(
      src,
      where,
      "Missing required argument",
      'The argument "condition" is required, but no definition was found.',
    );
  if (typeof message !== "string")
    throw err(
      src,
      where,
      "Missing required argument",
      'The argument "error_message" is required, but no definition was found.',
    );
  // The condition may refer to this variable and nothing else.
  const node = templateOf(src, condition, `${where}.validation.condition`);
  let good = 0;
  const visit = (x: unknown): void => {
    if (Array.isArray(x)) return x.forEach(visit);
    if (typeof x !== "object" || x === null) return;
    const n = x as { k?: string; obj?: { k: string; name: string }; name?: string };
    if (n.k === "attr" && n.obj?.k === "var" && n.obj.name === "var" && n.name === name) {
      good++;
      return;
    }
    if (n.k === "var") {
      throw err(
        src,
        condition,
        "Invalid reference in variable validation",
        `The condition for variable ${JSON.stringify(name)} can only refer to the variable itself, using var.${name}.`,
      );
    }
    Object.values(x).forEach(visit);
  };
  visit(node);
  if (good === 0)
    throw err(
      src,
      condition,
      "Invalid variable validation condition",
      `The condition for variable ${JSON.stringify(name)} must refer to var.${name} in order to test incoming values.`,
    );
  if (message === "")
    throw err(
      src,
      where,
      "Invalid validation error message",
      "An empty string is not a valid nor useful error message.",
    );
  const first = [...message][0]!;
  const last = message[message.length - 1]!;
  if (
    (/\p{L}/u.test(first) && first === first.toLowerCase() && first !== first.toUpperCase()) ||
    !".?!".includes(last)
  ) {
    throw err(
      src,
      message,
      "Invalid validation error message",
      "Validation error message must be at least one full sentence starting with an uppercase letter ( if the alphabet permits it ) and ending with a period or question mark.",
    );
  }
  return { condition, message, line: `${src.file}${lineOf(src.text, condition)}` };
}

/** The `var` object: each variable's winning value, checked by its validation rules. */
export function variableValues(
  src: Source,
  vars: Map<string, Variable>,
  functions: ReadonlyMap<string, HclFunction>,
): Obj {
  const out: Obj = {};
  for (const v of vars.values()) {
    const won = v.values[v.values.length - 1];
    if (won === undefined)
      throw err(src, `variable "${v.name}"`, `Unset variable ${JSON.stringify(v.name)}`, UNSET_DETAIL);
    for (const rule of v.validations) {
      const self: Obj = {};
      setKey(self, v.name, won.value);
      const scope: Scope = { roots: new Map([["var", () => self]]), functions };
      const field = `variable "${v.name}".validation.condition`;
      const ok = evalString(src, rule.condition, field, scope);
      if (ok === null)
        throw err(
          src,
          rule.condition,
          "Invalid variable validation result",
          "Validation condition expression must return either true or false, not null.",
        );
      if (typeof ok !== "boolean" && ok !== "true" && ok !== "false")
        throw err(
          src,
          rule.condition,
          "Invalid variable validation result",
          "Invalid validation condition result value: bool required.",
        );
      if (ok === false || ok === "false") {
        throw new SpecError(
          `${src.file}: Invalid value for ${won.from} variable; ${rule.message}\n\nThis was checked by the validation rule at ${rule.line}.`,
        );
      }
    }
    setKey(out, v.name, won.value);
  }
  return out;
}

/** The locals of every `locals` block, by name, still unevaluated. */
export function declareLocals(src: Source, decoded: Decoded): Map<string, unknown> {
  const locals = new Map<string, unknown>();
  for (const body of blockBodies(decoded.locals ?? [])) {
    for (const [name, raw] of Object.entries(body)) {
      if (locals.has(name))
        throw err(src, name, "Duplicate value in locals", `Duplicate ${name} definition found.`);
      locals.set(name, raw);
    }
  }
  return locals;
}

/**
 * The scope a jobspec body is evaluated in: `var`, and `local` whose values are computed on first
 * use (so a local may use one defined after it) with a reference cycle reported as an error.
 */
export function jobspecScope(
  src: Source,
  varObj: Obj,
  locals: Map<string, unknown>,
  functions: ReadonlyMap<string, HclFunction>,
): Scope {
  const done = new Map<string, Value>();
  const busy: string[] = [];
  const scope: Scope = { roots: new Map(), functions, lazy: new Map() };
  const local = (name: string, at: number): Value => {
    const have = done.get(name);
    if (have !== undefined || done.has(name)) return have!;
    if (!locals.has(name))
      throw new HclError(
        "Unsupported attribute",
        `This object does not have an attribute named ${JSON.stringify(name)}.`,
        at,
      );
    if (busy.includes(name)) {
      throw new SpecError(
        `${src.file}${lineOf(src.text, `${name} =`)}: Cycle in locals; local.${name} depends on itself through ${[...busy.slice(busy.indexOf(name)), name].map((n) => `local.${n}`).join(" → ")}.`,
      );
    }
    busy.push(name);
    const v = evalDecoded(src, locals.get(name), ["locals", name], scope) as Value;
    busy.pop();
    done.set(name, v);
    return v;
  };
  const allLocals = (): Value => {
    const o: Obj = {};
    for (const n of locals.keys()) setKey(o, n, local(n, -1));
    return o;
  };
  scope.roots.set("var", () => varObj).set("local", allLocals);
  scope.lazy!.set("local", local);
  return scope;
}
