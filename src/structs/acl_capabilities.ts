/**
 * The capability names of Nomad's ACL policies and the shorthand expansions (acl/policy.go): what
 * `policy = "read"` in a namespace, operator, host volume or node pool rule grants, and the
 * capabilities one capability implies (host-volume-write implies register, create, delete, read).
 */

/** The `policy = ...` levels a namespace, node, agent, operator, quota or host volume rule takes. */
export const POLICY_LEVELS = ["deny", "read", "write", "scale"];
/** A plugin rule's levels. */
export const PLUGIN_POLICIES = ["deny", "read", "list", "write"];

export const NS = {
  deny: "deny",
  listJobs: "list-jobs",
  parseJob: "parse-job",
  readJob: "read-job",
  submitJob: "submit-job",
  dispatchJob: "dispatch-job",
  readLogs: "read-logs",
  readFS: "read-fs",
  allocExec: "alloc-exec",
  allocNodeExec: "alloc-node-exec",
  allocLifecycle: "alloc-lifecycle",
  sentinelOverride: "sentinel-override",
  csiRegisterPlugin: "csi-register-plugin",
  csiWriteVolume: "csi-write-volume",
  csiReadVolume: "csi-read-volume",
  csiListVolume: "csi-list-volume",
  csiMountVolume: "csi-mount-volume",
  hostVolumeCreate: "host-volume-create",
  hostVolumeRegister: "host-volume-register",
  hostVolumeRead: "host-volume-read",
  hostVolumeWrite: "host-volume-write",
  hostVolumeDelete: "host-volume-delete",
  listScalingPolicies: "list-scaling-policies",
  readScalingPolicy: "read-scaling-policy",
  readJobScaling: "read-job-scaling",
  scaleJob: "scale-job",
  submitRecommendation: "submit-recommendation",
  registerJob: "register-job",
  revertJob: "revert-job",
  deregisterJob: "deregister-job",
  purgeJob: "purge-job",
  evaluateJob: "evaluate-job",
  planJob: "plan-job",
  tagJobVersion: "tag-job-version",
  stableJob: "stable-job",
  failDeployment: "fail-deployment",
  pauseDeployment: "pause-deployment",
  promoteDeployment: "promote-deployment",
  unblockDeployment: "unblock-deployment",
  cancelDeployment: "cancel-deployment",
  setAllocHealthDeployment: "set-alloc-health-deployment",
  gcAllocation: "gc-allocation",
  pauseAllocation: "pause-allocation",
  forcePeriodicJob: "force-periodic-job",
  deleteServiceRegistration: "delete-service-registration",
} as const;

export type NamespaceCapability = (typeof NS)[keyof typeof NS];

const NAMESPACE_CAPS: ReadonlySet<string> = new Set(Object.values(NS));

export function isNamespaceCapability(cap: string): cap is NamespaceCapability {
  return NAMESPACE_CAPS.has(cap);
}

const READ: NamespaceCapability[] = [
  NS.listJobs,
  NS.parseJob,
  NS.readJob,
  NS.csiListVolume,
  NS.csiReadVolume,
  NS.readJobScaling,
  NS.listScalingPolicies,
  NS.readScalingPolicy,
  NS.hostVolumeRead,
];

const WRITE: NamespaceCapability[] = [
  ...READ,
  NS.scaleJob,
  NS.submitJob,
  NS.dispatchJob,
  NS.readLogs,
  NS.readFS,
  NS.allocExec,
  NS.allocLifecycle,
  NS.csiMountVolume,
  NS.csiWriteVolume,
  NS.submitRecommendation,
  NS.hostVolumeCreate,
];

/** Nomad's expandNamespacePolicy: the capabilities a namespace `policy = ...` grants. */
export function expandNamespacePolicy(policy: string): string[] {
  switch (policy) {
    case "deny":
      return [NS.deny];
    case "read":
      return [...READ];
    case "write":
      return [...WRITE];
    case "scale":
      return [
        NS.listScalingPolicies,
        NS.readScalingPolicy,
        NS.readJobScaling,
        NS.scaleJob,
        NS.readJob,
        NS.submitRecommendation,
      ];
    default:
      return [];
  }
}

/** Nomad's expandNamespaceCapabilities: the host-volume capabilities one implies, appended. */
export function expandNamespaceCapabilities(caps: string[]): string[] {
  const extra: string[] = [];
  for (const cap of caps) {
    if (cap === NS.hostVolumeWrite)
      extra.push(NS.hostVolumeRegister, NS.hostVolumeCreate, NS.hostVolumeDelete, NS.hostVolumeRead);
    else if (cap === NS.hostVolumeRegister) extra.push(NS.hostVolumeCreate, NS.hostVolumeRead);
    else if (cap === NS.hostVolumeCreate) extra.push(NS.hostVolumeRead);
  }
  return [...caps, ...extra];
}

export function isNodePoolCapability(cap: string): boolean {
  return ["delete", "deny", "read", "write"].includes(cap);
}

export function expandNodePoolPolicy(policy: string): string[] {
  if (policy === "deny") return ["deny"];
  if (policy === "read") return ["read"];
  if (policy === "write") return ["delete", "read", "write"];
  return [];
}

export function isHostVolumeCapability(cap: string): boolean {
  return ["deny", "mount-readonly", "mount-readwrite"].includes(cap);
}

export function expandHostVolumePolicy(policy: string): string[] {
  if (policy === "deny") return ["deny"];
  if (policy === "read") return ["mount-readonly"];
  if (policy === "write") return ["mount-readonly", "mount-readwrite"];
  return [];
}

const OPERATOR_CAPS = [
  "deny",
  "snapshot-save",
  "license-read",
  "keyring-rotate",
  "keyring-read",
  "keyring-delete",
];

export function isOperatorCapability(cap: string): boolean {
  return OPERATOR_CAPS.includes(cap);
}

export function expandOperatorPolicy(policy: string): string[] {
  if (policy === "deny") return ["deny"];
  if (policy === "read") return ["license-read", "keyring-read"];
  if (policy === "write")
    return ["snapshot-save", "license-read", "keyring-rotate", "keyring-read", "keyring-delete"];
  return [];
}

export function isSentinelCapability(cap: string): boolean {
  return ["deny", "sentinel-read", "sentinel-submit", "sentinel-delete"].includes(cap);
}

export function expandSentinelPolicy(policy: string): string[] {
  if (policy === "deny") return ["deny"];
  if (policy === "read") return ["sentinel-read"];
  if (policy === "write") return ["sentinel-read", "sentinel-submit", "sentinel-delete"];
  return [];
}

export function isVariablesCapability(cap: string): boolean {
  return ["list", "read", "write", "destroy", "deny"].includes(cap);
}

/** Nomad's expandVariablesCapabilities: deny alone wins; read implies list. */
export function expandVariablesCapabilities(caps: string[]): string[] {
  if (caps.includes("deny")) return ["deny"];
  if (caps.includes("read") && !caps.includes("list")) return [...caps, "list"];
  return caps;
}
