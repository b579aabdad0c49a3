/**
 * Namespaces as objects (Nomad's structs.Namespace): every job, volume, alloc, eval and deployment
 * belongs to one, and a job or volume can only be written into a namespace that exists. `default`
 * always exists and cannot be deleted. Pure: the rules here are applied by the server's endpoints
 * inside their store transactions.
 */
import { BerthError, validationError } from "./errors.js";
import { asObject, optObject, optString, optStringArray, optStringMap } from "./json_check.js";

export interface NamespaceCapabilities {
  EnabledTaskDrivers: string[];
  DisabledTaskDrivers: string[];
  EnabledNetworkModes: string[];
  DisabledNetworkModes: string[];
}

export interface Namespace {
  Name: string;
  Description: string;
  /** A quota specification's name (Nomad Enterprise); kept and shown, never enforced by berth. */
  Quota: string;
  /** Checked when a job is registered (namespaceDriverRefusal); null when the namespace sets none. */
  Capabilities: NamespaceCapabilities | null;
  Meta: Record<string, string>;
  CreateIndex: number;
  ModifyIndex: number;
}

/** Nomad's structs.DefaultNamespace and its description. */
export const DEFAULT_NAMESPACE = "default";
export const DEFAULT_NAMESPACE_DESCRIPTION = "Default shared namespace";

/** Nomad's validNamespaceName. */
export const NAMESPACE_NAME_PATTERN = /^[a-zA-Z0-9-]{1,128}$/;
/** Nomad's maxNamespaceDescriptionLength. */
export const MAX_NAMESPACE_DESCRIPTION = 256;

/** The record `default` has until someone updates it (as Nomad creates it at bootstrap). */
export function defaultNamespace(index: number): Namespace {
  return {
    Name: DEFAULT_NAMESPACE,
    Description: DEFAULT_NAMESPACE_DESCRIPTION,
    Quota: "",
    Capabilities: null,
    Meta: {},
    CreateIndex: index,
    ModifyIndex: index,
  };
}

/**
 * The namespace in a request body (Nomad's api.Namespace), checked field by field. Nomad's other
 * fields (NodePoolConfiguration, VaultConfiguration, ConsulConfiguration, the extra claims) are
 * Enterprise or workload-identity features berth does not have: accepted when empty, refused when
 * set, so nothing the operator asked for is silently dropped. CreateIndex/ModifyIndex in the body
 * are ignored (the store stamps them).
 */
export function validateNamespace(input: unknown): Namespace {
  const o = asObject("Namespace", input);
  const name = o.Name;
  if (typeof name !== "string" || name === "") throw validationError("Name", "is required");
  const problems: string[] = [];
  if (!NAMESPACE_NAME_PATTERN.test(name)) {
    problems.push(`invalid name ${JSON.stringify(name)}. Must match regex ${NAMESPACE_NAME_PATTERN.source}`);
  } else if (name.startsWith("-")) {
    // Nomad's pattern allows it, but berth's IDs (path segments, `-namespace` values) cannot start so.
    problems.push(`invalid name ${JSON.stringify(name)}. Must not start with "-"`);
  }
  const description = optString("Description", o.Description, "");
  if (description.length > MAX_NAMESPACE_DESCRIPTION) {
    problems.push(`description longer than ${MAX_NAMESPACE_DESCRIPTION}`);
  }
  if (problems.length > 0) {
    // Nomad's text: `Invalid namespace "x": <problems>`.
    throw new BerthError(
      "ERR_VALIDATION",
      `Invalid namespace ${JSON.stringify(name)}: ${problems.join("; ")}`,
      {
        field: "Name",
      },
    );
  }
  for (const f of [
    "NodePoolConfiguration",
    "VaultConfiguration",
    "ConsulConfiguration",
    "RequiredExtraClaims",
    "OptionalExtraClaims",
  ]) {
    const v = o[f];
    if (v !== undefined && v !== null && !(typeof v === "object" && Object.keys(v).length === 0)) {
      throw validationError(f, "is not supported by berth (Nomad Enterprise / workload identity feature)");
    }
  }
  return {
    Name: name,
    Description: description,
    Quota: optString("Quota", o.Quota, ""),
    Capabilities: capabilities(o.Capabilities),
    Meta: optStringMap("Meta", o.Meta),
    CreateIndex: 0,
    ModifyIndex: 0,
  };
}

function capabilities(v: unknown): NamespaceCapabilities | null {
  const c = optObject("Capabilities", v);
  if (!c) return null;
  const list = (f: keyof NamespaceCapabilities) => optStringArray(`Capabilities.${f}`, c[f], []);
  return {
    EnabledTaskDrivers: list("EnabledTaskDrivers"),
    DisabledTaskDrivers: list("DisabledTaskDrivers"),
    EnabledNetworkModes: list("EnabledNetworkModes"),
    DisabledNetworkModes: list("DisabledNetworkModes"),
  };
}

/**
 * A job may only be registered into a namespace that exists: Nomad's text, a 400 naming
 * Job.Namespace. `ns` is the stored namespace, read in the same transaction as the write.
 */
export function requireJobNamespace(
  ns: Namespace | undefined,
  job: { ID: string; Namespace: string },
): Namespace {
  if (ns) return ns;
  throw new BerthError(
    "ERR_VALIDATION",
    `job ${JSON.stringify(job.ID)} is in nonexistent namespace ${JSON.stringify(job.Namespace)}`,
    { field: "Job.Namespace" },
  );
}

/** The same rule for volumes (register and create), with Nomad's text; `field` names the spec. */
export function requireVolumeNamespace(
  ns: Namespace | undefined,
  vol: { ID: string; Namespace: string },
  field: string,
): Namespace {
  if (ns) return ns;
  throw new BerthError("ERR_VALIDATION", `volume ${vol.ID} is in nonexistent namespace ${vol.Namespace}`, {
    field: `${field}.Namespace`,
  });
}

/** Nomad's taskValidateDriver: the enabled list (when set) allows, the disabled list refuses. */
export function driverAllowed(ns: Pick<Namespace, "Capabilities">, driver: string): boolean {
  const caps = ns.Capabilities;
  if (!caps) return true;
  let allow = caps.EnabledTaskDrivers.length === 0 || caps.EnabledTaskDrivers.includes(driver);
  if (caps.DisabledTaskDrivers.includes(driver)) allow = false;
  return allow;
}

/** Refuses a job whose tasks use drivers the namespace's capabilities do not allow (Nomad's texts). */
export function checkJobDrivers(
  ns: Pick<Namespace, "Name" | "Capabilities">,
  job: { TaskGroups: { Tasks: { Driver: string }[] }[] },
): void {
  const bad = job.TaskGroups.flatMap((g) => g.Tasks.map((t) => t.Driver)).filter(
    (d) => !driverAllowed(ns, d),
  );
  if (bad.length === 0) return;
  const message =
    bad.length === 1
      ? `used task driver ${JSON.stringify(bad[0])} is not allowed in namespace ${JSON.stringify(ns.Name)}`
      : `used task drivers [${bad.map((d) => JSON.stringify(d)).join(" ")}] are not allowed in namespace ${JSON.stringify(ns.Name)}`;
  throw new BerthError("ERR_VALIDATION", message, { field: "Job.TaskGroups" });
}

/** What still lives in a namespace, as the delete check counts it (see deleteRefusal). */
export interface NamespaceContents {
  /** Jobs whose Status is not "dead". */
  liveJobs: string[];
  /** Allocs not yet client-terminal. */
  liveAllocs: string[];
  /** Volumes, and volume creates started and not recorded (their storage may exist). */
  volumes: string[];
}

/**
 * Why `name` cannot be deleted, or undefined. As Nomad's Namespace.DeleteNamespaces: `default`
 * never; otherwise not while it has non-terminal jobs, non-terminal allocations or any CSI volume,
 * each named with Nomad's text (berth has one region, Nomad's "global"). Dead jobs and terminal
 * allocs do not hold it, as in Nomad: the garbage collector removes them later.
 */
export function deleteRefusal(name: string, contents: NamespaceContents): string | undefined {
  if (name === DEFAULT_NAMESPACE) return "can not delete default namespace";
  const n = JSON.stringify(name);
  const reasons: string[] = [];
  if (contents.liveJobs.length > 0) reasons.push(`namespace ${n} has non-terminal jobs in regions: [global]`);
  if (contents.liveAllocs.length > 0)
    reasons.push(`namespace ${n} has non-terminal allocations in regions: [global]`);
  if (contents.volumes.length > 0)
    reasons.push(`namespace ${n} has volumes associated with it in regions: [global]`);
  return reasons.length > 0 ? reasons.join("; ") : undefined;
}
