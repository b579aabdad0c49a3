/**
 * The jobspec stanzas berth keeps but does not act on (`service`, `network`, `vault`, `artifact`,
 * `logs`, `periodic`, …), decoded into the JSON Nomad's `api` package gives them (field names from
 * its `hcl`/`mapstructure` tags, durations in nanoseconds), so `job inspect` shows what Nomad
 * would and the server stores them verbatim. Each stanza is described by a schema; a key the schema
 * lacks is refused by name, as everywhere in the jobspec. Free-form parts (`connect`, `config`,
 * `policy`, CNI args) are kept with their keys as written.
 */
import type { Body } from "./body.js";

type Obj = Record<string, unknown>;

/** How one HCL key decodes: its JSON name and kind. */
type Field =
  | [name: string, kind: "s" | "i" | "n" | "b" | "d" | "l" | "m" | "raw" | "mapOfLists"]
  | [name: string, kind: "block" | "blocks", schema: Schema]
  | [name: string, kind: "labelled", schema: Schema, labelKey: string];
export type Schema = Record<string, Field>;

/** Decodes `b` by `schema`, then refuses any key the schema does not name. */
export function decodeKept(b: Body, schema: Schema): Obj {
  const out: Obj = {};
  for (const [key, field] of Object.entries(schema)) {
    if (!b.has(key)) continue;
    const v = decodeField(b, key, field);
    if (v !== undefined) out[field[0]] = v;
  }
  b.finish();
  return out;
}

function decodeField(b: Body, key: string, f: Field): unknown {
  switch (f[1]) {
    case "s":
      return b.string(key);
    case "i":
      return b.integer(key);
    case "n":
      return b.number(key);
    case "b":
      return b.bool(key);
    case "d":
      return b.duration(key);
    case "l":
      return b.stringList(key);
    case "m":
      return b.stringMap(key);
    case "raw":
      return b.raw(key);
    case "mapOfLists":
      return b.raw(key);
    case "block": {
      const inner = b.block(key);
      return inner ? decodeKept(inner, f[2]) : undefined;
    }
    case "blocks":
      return b.blocks(key).map((inner) => decodeKept(inner, f[2]));
    case "labelled":
      return b.labelled(key).map(([label, inner]) => ({ [f[3]]: label, ...decodeKept(inner, f[2]) }));
  }
}

const CHECK_RESTART: Schema = {
  limit: ["Limit", "i"],
  grace: ["Grace", "d"],
  ignore_warnings: ["IgnoreWarnings", "b"],
};

const CHECK: Schema = {
  name: ["Name", "s"],
  type: ["Type", "s"],
  command: ["Command", "s"],
  args: ["Args", "l"],
  path: ["Path", "s"],
  protocol: ["Protocol", "s"],
  port: ["PortLabel", "s"],
  expose: ["Expose", "b"],
  address_mode: ["AddressMode", "s"],
  advertise: ["Advertise", "s"],
  interval: ["Interval", "d"],
  timeout: ["Timeout", "d"],
  initial_status: ["InitialStatus", "s"],
  notes: ["Notes", "s"],
  tls_server_name: ["TLSServerName", "s"],
  tls_skip_verify: ["TLSSkipVerify", "b"],
  header: ["Header", "mapOfLists"],
  method: ["Method", "s"],
  check_restart: ["CheckRestart", "block", CHECK_RESTART],
  grpc_service: ["GRPCService", "s"],
  grpc_use_tls: ["GRPCUseTLS", "b"],
  task: ["TaskName", "s"],
  success_before_passing: ["SuccessBeforePassing", "i"],
  failures_before_critical: ["FailuresBeforeCritical", "i"],
  failures_before_warning: ["FailuresBeforeWarning", "i"],
  body: ["Body", "s"],
  on_update: ["OnUpdate", "s"],
};

export const IDENTITY: Schema = {
  name: ["Name", "s"],
  aud: ["Audience", "l"],
  change_mode: ["ChangeMode", "s"],
  change_signal: ["ChangeSignal", "s"],
  env: ["Env", "b"],
  file: ["File", "b"],
  filepath: ["Filepath", "s"],
  service_name: ["ServiceName", "s"],
  ttl: ["TTL", "d"],
  extra_claims: ["ExtraClaims", "l"],
};

export const SERVICE: Schema = {
  name: ["Name", "s"],
  tags: ["Tags", "l"],
  canary_tags: ["CanaryTags", "l"],
  enable_tag_override: ["EnableTagOverride", "b"],
  port: ["PortLabel", "s"],
  address_mode: ["AddressMode", "s"],
  address: ["Address", "s"],
  check: ["Checks", "blocks", CHECK],
  check_restart: ["CheckRestart", "block", CHECK_RESTART],
  connect: ["Connect", "raw"],
  meta: ["Meta", "m"],
  canary_meta: ["CanaryMeta", "m"],
  tagged_addresses: ["TaggedAddresses", "m"],
  task: ["TaskName", "s"],
  on_update: ["OnUpdate", "s"],
  identity: ["Identity", "block", IDENTITY],
  weights: ["Weights", "block", { passing: ["Passing", "i"], warning: ["Warning", "i"] }],
  provider: ["Provider", "s"],
  cluster: ["Cluster", "s"],
  kind: ["Kind", "s"],
};

const PORT: Schema = {
  static: ["Value", "i"],
  to: ["To", "i"],
  host_network: ["HostNetwork", "s"],
  ignore_collision: ["IgnoreCollision", "b"],
};

export const NETWORK: Schema = {
  mode: ["Mode", "s"],
  device: ["Device", "s"],
  cidr: ["CIDR", "s"],
  ip: ["IP", "s"],
  hostname: ["Hostname", "s"],
  mbits: ["MBits", "i"],
  dns: [
    "DNS",
    "block",
    { servers: ["Servers", "l"], searches: ["Searches", "l"], options: ["Options", "l"] },
  ],
  reserved_ports: ["ReservedPorts", "labelled", PORT, "Label"],
  port: ["DynamicPorts", "labelled", PORT, "Label"],
  cni: ["CNI", "block", { args: ["Args", "m"] }],
};

/**
 * Nomad's jobspec2 normalizeNetworkPorts: `port` blocks with a `static` value are reserved ports,
 * the others dynamic.
 */
export function normalizePorts(n: Obj): Obj {
  const ports = [
    ...((n.ReservedPorts as Obj[] | undefined) ?? []),
    ...((n.DynamicPorts as Obj[] | undefined) ?? []),
  ];
  if (ports.length === 0) return n;
  const reserved = ports.filter((p) => typeof p.Value === "number" && p.Value > 0);
  const dynamic = ports.filter((p) => !(typeof p.Value === "number" && p.Value > 0));
  const out = { ...n };
  delete out.ReservedPorts;
  delete out.DynamicPorts;
  if (reserved.length > 0) out.ReservedPorts = reserved;
  if (dynamic.length > 0) out.DynamicPorts = dynamic;
  return out;
}

export const VAULT: Schema = {
  policies: ["Policies", "l"],
  role: ["Role", "s"],
  namespace: ["Namespace", "s"],
  cluster: ["Cluster", "s"],
  env: ["Env", "b"],
  disable_file: ["DisableFile", "b"],
  change_mode: ["ChangeMode", "s"],
  change_signal: ["ChangeSignal", "s"],
  allow_token_expiration: ["AllowTokenExpiration", "b"],
};

/** Nomad's jobspec2 normalizeVault defaults. */
export function normalizeVault(v: Obj): Obj {
  return { Env: true, DisableFile: false, ChangeMode: "restart", ...v };
}

export const ARTIFACT: Schema = {
  source: ["GetterSource", "s"],
  options: ["GetterOptions", "m"],
  headers: ["GetterHeaders", "m"],
  mode: ["GetterMode", "s"],
  insecure: ["GetterInsecure", "b"],
  destination: ["RelativeDest", "s"],
  chown: ["Chown", "b"],
};

export const LOGS: Schema = {
  max_files: ["MaxFiles", "i"],
  max_file_size: ["MaxFileSizeMB", "i"],
  enabled: ["Enabled", "b"],
  disabled: ["Disabled", "b"],
};

export const EPHEMERAL_DISK: Schema = {
  sticky: ["Sticky", "b"],
  migrate: ["Migrate", "b"],
  size: ["SizeMB", "i"],
};

export const MIGRATE: Schema = {
  max_parallel: ["MaxParallel", "i"],
  health_check: ["HealthCheck", "s"],
  min_healthy_time: ["MinHealthyTime", "d"],
  healthy_deadline: ["HealthyDeadline", "d"],
};

export const PERIODIC: Schema = {
  enabled: ["Enabled", "b"],
  cron: ["Spec", "s"],
  crons: ["Specs", "l"],
  prohibit_overlap: ["ProhibitOverlap", "b"],
  time_zone: ["TimeZone", "s"],
};

export const PARAMETERIZED: Schema = {
  payload: ["Payload", "s"],
  meta_required: ["MetaRequired", "l"],
  meta_optional: ["MetaOptional", "l"],
};

export const MULTIREGION: Schema = {
  strategy: ["Strategy", "block", { max_parallel: ["MaxParallel", "i"], on_failure: ["OnFailure", "s"] }],
  region: [
    "Regions",
    "labelled",
    {
      count: ["Count", "i"],
      datacenters: ["Datacenters", "l"],
      node_pool: ["NodePool", "s"],
      meta: ["Meta", "m"],
    },
    "Name",
  ],
};

export const UI: Schema = {
  description: ["Description", "s"],
  link: ["Links", "blocks", { label: ["Label", "s"], url: ["URL", "s"] }],
};

export const SCALING: Schema = {
  min: ["Min", "i"],
  max: ["Max", "i"],
  policy: ["Policy", "raw"],
  enabled: ["Enabled", "b"],
  type: ["Type", "s"],
};

export const DISCONNECT: Schema = {
  lost_after: ["LostAfter", "d"],
  stop_on_client_after: ["StopOnClientAfter", "d"],
  replace: ["Replace", "b"],
  reconcile: ["Reconcile", "s"],
};

export const CONSUL: Schema = {
  namespace: ["Namespace", "s"],
  cluster: ["Cluster", "s"],
  partition: ["Partition", "s"],
};

export const SECRET: Schema = {
  provider: ["Provider", "s"],
  path: ["Path", "s"],
  config: ["Config", "raw"],
  env: ["Env", "m"],
};

export const ACTION: Schema = { command: ["Command", "s"], args: ["Args", "l"] };

export const SCHEDULE: Schema = {
  cron: ["Cron", "block", { start: ["Start", "s"], end: ["End", "s"], timezone: ["Timezone", "s"] }],
};

export const DISPATCH_PAYLOAD: Schema = { file: ["File", "s"] };

/** A `device "name"` block's own fields; its constraints and affinities decode as the task's. */
export const DEVICE: Schema = { count: ["Count", "i"] };

export const NUMA: Schema = { affinity: ["Affinity", "s"], devices: ["Devices", "l"] };

export const CHANGE_SCRIPT: Schema = {
  command: ["Command", "s"],
  args: ["Args", "l"],
  timeout: ["Timeout", "d"],
  fail_on_error: ["FailOnError", "b"],
  run_on_first_render: ["RunOnFirstRender", "b"],
};

/** Nomad's jobspec2 normalizeChangeScript defaults. */
export function normalizeChangeScript(c: Obj): Obj {
  return { Args: [], Timeout: 5e9, FailOnError: false, RunOnFirstRender: false, ...c };
}

export const WAIT: Schema = { min: ["Min", "d"], max: ["Max", "d"] };
