/**
 * The values a jobspec's variables are given from outside, in Nomad's order (types.variables.go's
 * collectInputVariableValues): `NOMAD_VAR_<name>` in the environment, then `-var-file` files in
 * order, then `-var` flags; the last one set wins over the default. A -var or environment value of
 * a string or number variable (or one without a type) is taken literally; any other is parsed as an
 * HCL expression (literals only) and converted to the variable's type.
 */
import { SpecError } from "../body.js";
import { HclError, type Value } from "./ast.js";
import { evalDecoded, type Source } from "./decoded.js";
import { evaluate } from "./evaluate.js";
import { parseExpression } from "./template.js";
import { convert, takesLiteralString } from "./types.js";
import { err, isRecord, NO_CONTEXT, type Variable } from "./variables.js";

/** A var file's attributes, already decoded (HCL through hcl2json, or JSON). */
export interface VarFile {
  file: string;
  text: string;
  attrs: Record<string, unknown>;
}

export interface VariableInputs {
  vars: string[];
  varFiles: VarFile[];
  env: Record<string, string | undefined>;
  /** Whether a value for an undeclared variable is an error (Nomad's -hcl2-strict, on by default). */
  strict: boolean;
}

/** The value of a -var flag or NOMAD_VAR_ variable for `v`: a literal string for string and number
 * (and untyped) variables, an HCL expression otherwise, converted to the variable's type. */
function inputValue(v: Variable, raw: string, what: string, summary: string, detail: string): Value {
  let value: Value;
  try {
    value = takesLiteralString(v.type) ? raw : evaluate(parseExpression(raw), NO_CONTEXT);
  } catch (e) {
    if (!(e instanceof HclError)) throw e;
    throw new SpecError(`<value for var.${v.name} from ${what}>: ${e.summary}; ${e.detail}`);
  }
  if (v.type === undefined) return value;
  try {
    return convert(value, v.type);
  } catch (e) {
    throw new SpecError(
      `<value for var.${v.name} from ${what}>: ${summary}; ${detail.replace("%s", v.name)}: ${(e as Error).message}.`,
    );
  }
}

/** Adds the inputs' values to the declared variables, in Nomad's order (env, files, -var). */
export function collectInputs(src: Source, vars: Map<string, Variable>, inputs: VariableInputs): void {
  for (const [k, raw] of Object.entries(inputs.env)) {
    const v = k.startsWith("NOMAD_VAR_") ? vars.get(k.slice("NOMAD_VAR_".length)) : undefined;
    if (v === undefined || raw === undefined) continue; // undeclared: not for this jobspec
    v.values.push({
      from: "env",
      value: inputValue(
        v,
        raw,
        "env",
        "Invalid value for variable",
        "The value for %s is not compatible with the variable's type constraint",
      ),
    });
  }
  for (const f of inputs.varFiles) {
    const fsrc = { file: f.file, text: f.text };
    if (f.attrs.variable !== undefined) {
      const name = isRecord(f.attrs.variable) ? (Object.keys(f.attrs.variable)[0] ?? "") : "";
      throw err(
        fsrc,
        "variable",
        "Variable declaration in a .var file",
        `A .var file is used to assign values to variables that have already been declared in job files, not to declare new variables. To declare variable ${JSON.stringify(name)}, place this block in one of your job files\n\nTo set a value for this variable in ${f.file}, use the definition syntax instead:\n    ${name} = <value>`,
      );
    }
    for (const [name, raw] of Object.entries(f.attrs)) {
      const v = vars.get(name);
      if (v === undefined) {
        if (!inputs.strict) continue;
        throw err(
          fsrc,
          name,
          "Undefined variable",
          `A ${JSON.stringify(name)} variable was set but was not found in known variables. To declare variable ${JSON.stringify(name)}, place this block in your job files`,
        );
      }
      let value = evalDecoded(fsrc, raw, [name], NO_CONTEXT) as Value;
      if (v.type) {
        try {
          value = convert(value, v.type);
        } catch (e) {
          throw err(
            fsrc,
            name,
            "Invalid value for variable",
            `The value for ${name} is not compatible with the variable's type constraint: ${(e as Error).message}.`,
          );
        }
      }
      v.values.push({ from: "varfile", value });
    }
  }
  for (const arg of inputs.vars) {
    const eq = arg.indexOf("=");
    if (eq <= 0)
      throw new SpecError(`-var ${JSON.stringify(arg.replace(/=.*/s, "=…"))}: expected name=value`);
    const name = arg.slice(0, eq);
    const v = vars.get(name);
    if (v === undefined) {
      if (!inputs.strict) continue;
      throw new SpecError(
        `${src.file}: Undefined -var variable; A ${JSON.stringify(name)} variable was passed in the command line but was not found in known variables. To declare variable ${JSON.stringify(name)}, place this block in your job file`,
      );
    }
    v.values.push({
      from: "cmd",
      value: inputValue(
        v,
        arg.slice(eq + 1),
        "arguments",
        "Invalid argument value for -var variable",
        "The received arg value for %s is not compatible with the variable's type constraint",
      ),
    });
  }
}
