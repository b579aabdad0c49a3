/**
 * Go's view of the JSON values a template walks. The API's JSON does not say which objects were Go
 * structs and which were maps, and the difference shows: a missing map key prints `<no value>`, a
 * missing struct field is an error. An object is taken as a map when it was reached through a field
 * Nomad's API types declare as a map (Meta, Tags, TaskStates, …) or when one of its keys does not
 * begin with a capital letter (struct fields are exported, so capitalised); any other non-empty
 * object is a struct. JSON integers are Go ints, other numbers float64.
 */

export type Kind = "invalid" | "nil" | "string" | "int" | "float" | "bool" | "slice" | "map" | "struct";

/** Fields of Nomad's API structs whose Go type is a map (their keys may be capitalised). */
export const MAP_FIELDS: ReadonlySet<string> = new Set([
  "Attributes",
  "Capabilities",
  "ClassExhausted",
  "ClassFiltered",
  "Config",
  "ConstraintFiltered",
  "Context",
  "Controllers",
  "CSIControllerPlugins",
  "CSINodePlugins",
  "DesiredTGUpdates",
  "DimensionExhausted",
  "Drivers",
  "Env",
  "FailedTGAllocs",
  "HostNetworks",
  "HostVolumes",
  "Labels",
  "Links",
  "Meta",
  "MountOptionsMap",
  "Nodes",
  "Parameters",
  "QueuedAllocations",
  "ReadAllocs",
  "Secrets",
  "Summary",
  "Tags",
  "TaskGroups",
  "TaskResources",
  "TaskStates",
  "Volumes",
  "WriteAllocs",
]);

const maps = new WeakSet<object>();

/** Marks `v` (when an object) as a Go map: `field` is the name it was reached by. */
export function reachedBy(field: string, v: unknown): unknown {
  if (MAP_FIELDS.has(field) && typeof v === "object" && v !== null && !Array.isArray(v)) maps.add(v);
  return v;
}

export function kindOf(v: unknown): Kind {
  if (v === undefined) return "invalid";
  if (v === null) return "nil";
  switch (typeof v) {
    case "string":
      return "string";
    case "boolean":
      return "bool";
    case "number":
      return Number.isInteger(v) ? "int" : "float";
    case "bigint":
      return "int";
    case "object": {
      if (Array.isArray(v)) return "slice";
      if (maps.has(v)) return "map";
      const keys = Object.keys(v);
      return keys.length > 0 && keys.every((k) => /^[A-Z]/.test(k)) ? "struct" : "map";
    }
    default:
      return "invalid";
  }
}

/** The Go type a message names (`can't evaluate field X in type string`, `%!d(string=x)`). */
export function typeName(v: unknown): string {
  switch (kindOf(v)) {
    case "int":
      return "int";
    case "float":
      return "float64";
    case "string":
      return "string";
    case "bool":
      return "bool";
    case "slice":
      return "[]interface {}";
    case "map":
      return "map[string]interface {}";
    case "struct":
      return "struct";
    default:
      return "<nil>";
  }
}

/** Go's truth of `if`, `with`, `and`, `or`, `not`: the zero value of its type is false. */
export function isTrue(v: unknown): boolean {
  switch (kindOf(v)) {
    case "invalid":
    case "nil":
      return false;
    case "string":
      return (v as string).length > 0;
    case "slice":
      return (v as unknown[]).length > 0;
    case "map":
      return Object.keys(v as object).length > 0;
    case "struct":
      return true;
    case "bool":
      return v as boolean;
    default:
      return v !== 0;
  }
}

/** Entries of a map in Go's printing and ranging order: sorted by key. */
export function sortedEntries(v: object): [string, unknown][] {
  return Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
