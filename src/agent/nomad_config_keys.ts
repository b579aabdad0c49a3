/**
 * Which keys of a Nomad agent config berth reads, and which Nomad keys it accepts without using
 * them (with the reason the operator is told). The key lists are Nomad's (command/agent/config.go
 * and nomad/structs/config: the `hcl:"…"` names of Config, ClientConfig, ServerConfig, ACLConfig,
 * Telemetry, Ports, Addresses, AdvertiseAddrs, Resources, ServerJoin, ClientIntroduction, Limits,
 * TLSConfig; the drivers' config specs for `plugin "…" { config }`).
 *
 * A path is the dotted way to a block (`""` is the top, `plugin.docker.config`); a path that is
 * not listed is not checked here (its parser checks it: `client.meta`, `client.host_volume.*`, …).
 * A key of a listed path is `read` (handed on to the parser, which checks its value), `ignored`
 * (dropped with a warning naming it and the reason), or, in a path with `otherwise`, a label
 * dropped with that reason; any other key is neither berth's nor Nomad's and is refused
 * (config_triage.ts), as Nomad's decoder refuses unknown keys.
 */

export interface BlockKeys {
  /** Keys berth reads: their values are checked by the block's parser. */
  read: readonly string[];
  /** Nomad's keys berth does not use: key → why, said in the warning. */
  ignored: Readonly<Record<string, string>>;
  /** A labelled block's other labels (e.g. a plugin berth does not have): the warning's reason. */
  otherwise?: string;
}

const NO_CONSUL = "berth has no Consul integration (no service registration, Connect or Consul KV)";
const NO_VAULT = "berth has no Vault integration (tasks get no Vault tokens)";
const RAFT =
  "berth's servers keep no Raft log: several servers share their state through etcd (server { etcd })";
const GOSSIP = "berth's servers have no Serf gossip: they find each other through etcd (server { etcd })";
const LOGGING = "berth logs to stderr only (run it under a supervisor such as systemd to keep logs)";
const GC = "berth's garbage collector runs with its own thresholds";
const SCHED = "berth's scheduler has no such setting";
const CLIENT_NET = "berth's node agent sets up no task networking (no CNI, bridge or host networks)";
const CLIENT_DIRS = "berth keeps its client state, alloc and plugin dirs under data_dir";
const NOT_BERTH = "berth has no such feature";
const METRICS_SINK = "berth sends metrics nowhere; scrape /v1/metrics?format=prometheus";

function each(keys: string[], why: string): Record<string, string> {
  return Object.fromEntries(keys.map((k) => [k, why]));
}

const TOP: BlockKeys = {
  read: [
    "name",
    "region",
    "datacenter",
    "data_dir",
    "bind_addr",
    "log_level",
    "ports",
    "addresses",
    "advertise",
    "server",
    "client",
    "plugin",
    "limits",
    "tls",
    "acl",
    "http_api_response_headers",
    "telemetry",
  ],
  ignored: {
    ...each(
      ["log_json", "log_file", "log_include_location", "log_rotate_duration", "log_rotate_bytes"],
      LOGGING,
    ),
    ...each(["log_rotate_max_files", "enable_syslog", "syslog_facility", "eventlog"], LOGGING),
    plugin_dir: "berth's task drivers are built in; it loads no plugin binaries",
    enable_debug: "berth serves no /debug/pprof endpoints",
    leave_on_interrupt: "berth's servers leave the etcd cluster on every orderly stop",
    leave_on_terminate: "berth's servers leave the etcd cluster on every orderly stop",
    disable_update_check: "berth never checks for updates",
    disable_anonymous_signature: "berth never checks for updates",
    consul: NO_CONSUL,
    vault: NO_VAULT,
    ui: "berth serves no web UI",
    sentinel: "berth has no Sentinel policies (Nomad Enterprise)",
    autopilot: RAFT,
    audit: "berth writes no audit log (Nomad Enterprise)",
    reporting: "berth reports no license utilisation (Nomad Enterprise)",
    keyring: "berth's keyring is kept in its state, encrypted at rest, with no external KMS",
    rpc: "berth's agent RPC rides a WebSocket with its own timeouts",
  },
};

const PORTS: BlockKeys = { read: ["http", "rpc"], ignored: { serf: GOSSIP } };

const CLIENT: BlockKeys = {
  read: [
    "enabled",
    "servers",
    "server_join",
    "node_class",
    "meta",
    "host_volume",
    "reserved",
    "cpu_total_compute",
    "memory_total_mb",
    "disk_total_mb",
    "options",
    "csi_volume_stats_interval",
    "csi_unmount_escalate_after",
  ],
  ignored: {
    ...each(["state_dir", "alloc_dir", "alloc_mounts_dir", "host_volumes_dir"], CLIENT_DIRS),
    ...each(["host_volume_plugin_dir", "common_plugin_dir"], CLIENT_DIRS),
    ...each(["network_interface", "preferred_address_family", "network_speed", "cni_path"], CLIENT_NET),
    ...each(["cni_config_dir", "bridge_network_name", "bridge_network_subnet"], CLIENT_NET),
    ...each(["bridge_network_subnet_ipv6", "bridge_network_hairpin_mode", "host_network"], CLIENT_NET),
    ...each(["bind_wildcard_default_host_network", "min_dynamic_port", "max_dynamic_port"], CLIENT_NET),
    ...each(["client_min_port", "client_max_port"], CLIENT_NET),
    ...each(["gc_interval", "gc_parallel_destroys", "gc_disk_usage_threshold"], GC),
    ...each(["gc_inode_usage_threshold", "gc_max_allocs", "gc_volumes_on_node_gc"], GC),
    node_pool: "berth has no node pools: every node is in the default pool",
    chroot_env: "berth's exec driver builds no chroot",
    cpu_disable_dmidecode: "berth reads the CPU from /proc/cpuinfo only",
    disk_free_mb: "set disk_total_mb or reserved { disk } instead",
    reservable_cores: "berth reserves no CPU cores for tasks",
    max_kill_timeout: "berth bounds a task's kill_timeout itself",
    no_host_uuid: "berth's node ID is random, kept in data_dir",
    disable_remote_exec: "berth's exec sessions are governed by ACLs (alloc-exec)",
    template: "berth has no template block",
    cgroup_parent: "berth places tasks in its own cgroup tree",
    nomad_service_discovery: "berth has no service discovery",
    artifact: "berth has no artifact block",
    drain_on_shutdown: "berth's node agent does not drain itself on shutdown",
    users: "berth allocates no dynamic workload users",
    node_max_allocs: "berth does not cap allocs per node",
    log_file: LOGGING,
    fingerprint: "berth's fingerprinters have no settings",
    default_ineligible: "berth's nodes start eligible",
    stats: "berth collects host stats at a fixed interval",
  },
};

const SERVER: BlockKeys = {
  read: [
    "enabled",
    "bootstrap_expect",
    "server_join",
    "start_join",
    "retry_join",
    "retry_max",
    "retry_interval",
    "failover_heartbeat_ttl",
    "client_introduction",
    "etcd",
  ],
  ignored: {
    ...each(["protocol_version", "raft_protocol", "raft_multiplier", "raft_logstore"], RAFT),
    ...each(["raft_boltdb", "raft_snapshot_threshold", "raft_snapshot_interval"], RAFT),
    ...each(["raft_trailing_logs", "non_voting_server", "redundancy_zone", "upgrade_version"], RAFT),
    ...each(["rejoin_after_leave"], RAFT),
    encrypt: GOSSIP,
    data_dir: "berth keeps the server's state under the agent's data_dir",
    authoritative_region: "berth has one region",
    ...each(["num_schedulers", "enabled_schedulers", "default_scheduler_config"], SCHED),
    ...each(["plan_rejection_tracker", "plan_apply_pipeline", "deploy_query_rate_limit"], SCHED),
    ...each(["node_gc_threshold", "job_gc_interval", "job_gc_threshold", "eval_gc_threshold"], GC),
    ...each(["batch_eval_gc_threshold", "deployment_gc_threshold", "csi_volume_claim_gc_interval"], GC),
    ...each(["csi_volume_claim_gc_threshold", "csi_plugin_gc_threshold", "acl_token_gc_threshold"], GC),
    ...each(["root_key_gc_interval", "root_key_gc_threshold", "root_key_rotation_threshold"], GC),
    heartbeat_grace: "use berth agent -heartbeat-ttl",
    min_heartbeat_ttl: "use berth agent -heartbeat-ttl",
    max_heartbeats_per_second: "berth's heartbeat TTL is fixed (-heartbeat-ttl)",
    enable_event_broker: "berth's event stream is always on",
    event_buffer_size: "berth's event stream keeps its own buffer",
    license_path: "berth needs no license",
    search: "berth's search is prefix-only",
    ...each(["job_default_priority", "job_max_priority", "job_max_count"], NOT_BERTH),
    ...each(["job_max_source_size", "job_tracked_versions", "oidc_issuer"], NOT_BERTH),
    start_timeout: "berth's server starts without a timeout of its own",
    log_file: LOGGING,
    non_production: NOT_BERTH,
  },
};

const SERVER_JOIN: BlockKeys = {
  read: ["start_join", "retry_join", "retry_max", "retry_interval"],
  ignored: {},
};

const TELEMETRY: BlockKeys = {
  read: [
    "prometheus_metrics",
    "disable_hostname",
    "collection_interval",
    "in_memory_collection_interval",
    "metrics_require_acl",
    "publish_allocation_metrics",
    "publish_node_metrics",
  ],
  ignored: {
    in_memory_retention_period: "berth keeps only the last finished interval, the one /v1/metrics shows",
    ...each(["statsite_address", "statsd_address", "datadog_address", "datadog_tags"], METRICS_SINK),
    ...each(["circonus_api_token", "circonus_api_app", "circonus_api_url"], METRICS_SINK),
    ...each(["circonus_submission_interval", "circonus_submission_url", "circonus_check_id"], METRICS_SINK),
    ...each(["circonus_check_force_metric_activation", "circonus_check_instance_id"], METRICS_SINK),
    ...each(
      ["circonus_check_search_tag", "circonus_check_tags", "circonus_check_display_name"],
      METRICS_SINK,
    ),
    ...each(["circonus_broker_id", "circonus_broker_select_tag"], METRICS_SINK),
    use_node_name: "berth labels gauges with the host name only",
    include_alloc_metadata_in_metrics: "berth labels allocation metrics with job, group, alloc, task only",
    allowed_metadata_keys_in_metrics: "berth labels allocation metrics with job, group, alloc, task only",
    ...each(["prefix_filter", "filter_default"], "berth does not filter metrics by prefix"),
    ...each(["disable_dispatched_job_summary_metrics", "disable_quota_utilization_metrics"], NOT_BERTH),
    ...each(["disable_rpc_rate_metrics_labels", "disable_allocation_hook_metrics"], NOT_BERTH),
  },
};

const ACL: BlockKeys = {
  read: ["enabled", "token_min_expiration_ttl", "token_max_expiration_ttl"],
  ignored: {
    token_ttl: "berth resolves tokens from its state on every request; there is no token cache",
    policy_ttl: "berth reads policies from its state on every change; there is no policy cache",
    role_ttl: "berth has no ACL roles",
    replication_token: "berth has a single region; there is nothing to replicate",
  },
};

const LIMITS: BlockKeys = {
  read: [
    "http_max_conns_per_client",
    "rpc_max_conns_per_client",
    "rpc_handshake_timeout",
    "rpc_auth_failure_burst",
    "rpc_auth_failure_interval",
  ],
  ignored: {
    https_handshake_timeout: "with TLS on, berth bounds the handshake at Nomad's default, 5s",
  },
};

const TLS: BlockKeys = {
  read: [
    "http",
    "rpc",
    "ca_file",
    "cert_file",
    "key_file",
    "verify_server_hostname",
    "verify_https_client",
    "tls_min_version",
    "rpc_upgrade_mode",
    "tls_cipher_suites",
  ],
  ignored: {},
};

const DRIVER_BINARY = "berth's task drivers are built in: there is no plugin binary to pass args to";

/** A built-in driver's plugin block: `config` is read, `args` is Nomad's for external binaries. */
const PLUGIN_BLOCK: BlockKeys = { read: ["config"], ignored: { args: DRIVER_BINARY } };

const DOCKER_CONFIG: BlockKeys = {
  // allow_caps narrows what tasks may ask for: refused by its parser rather than ignored.
  read: ["endpoint", "allow_privileged", "volumes", "allow_caps"],
  ignored: {
    ...each(["auth", "tls", "gc", "logging", "extra_labels", "allow_runtimes", "nvidia_runtime"], NOT_BERTH),
    ...each(
      ["infra_image", "infra_image_pull_timeout", "image_pull_timeout", "pull_activity_timeout"],
      NOT_BERTH,
    ),
    ...each(
      ["container_exists_attempts", "oom_score_adj", "pids_limit", "disable_log_collection"],
      NOT_BERTH,
    ),
    ...each(["windows_allow_insecure_container_admin", "allowed_modes", "image_delay"], NOT_BERTH),
  },
};

/**
 * Settings that narrow what tasks may do are read (so their parsers refuse them: ignoring one would
 * let a task do what the operator forbade); the rest of Nomad's are ignored.
 */
const EXEC_CONFIG: BlockKeys = {
  read: ["denied_host_uids", "denied_host_gids", "allow_caps"],
  ignored: each(["no_pivot_root", "default_pid_mode", "default_ipc_mode"], NOT_BERTH),
};

const RAW_EXEC_CONFIG: BlockKeys = {
  read: ["enabled", "denied_host_uids", "denied_host_gids", "denied_envvars"],
  ignored: { no_cgroups: "berth's raw_exec places tasks in cgroups when it can" },
};

export const NOMAD_AGENT_KEYS: ReadonlyMap<string, BlockKeys> = new Map([
  ["", TOP],
  ["ports", PORTS],
  ["addresses", PORTS],
  ["advertise", PORTS],
  ["client", CLIENT],
  ["client.server_join", SERVER_JOIN],
  [
    "client.reserved",
    { read: ["cpu", "memory", "disk"], ignored: each(["reserved_ports", "cores"], NOT_BERTH) },
  ],
  ["server", SERVER],
  ["server.server_join", SERVER_JOIN],
  [
    "server.client_introduction",
    { read: ["enforcement", "default_identity_ttl", "max_identity_ttl"], ignored: {} },
  ],
  ["telemetry", TELEMETRY],
  ["acl", ACL],
  ["limits", LIMITS],
  ["tls", TLS],
  [
    "plugin",
    {
      read: ["docker", "exec", "raw_exec"],
      ignored: {},
      otherwise: "berth has no such task driver (its drivers are exec, raw_exec and docker)",
    },
  ],
  ["plugin.docker", PLUGIN_BLOCK],
  ["plugin.exec", PLUGIN_BLOCK],
  ["plugin.raw_exec", PLUGIN_BLOCK],
  ["plugin.docker.config", DOCKER_CONFIG],
  ["plugin.docker.config.volumes", { read: ["enabled"], ignored: { selinuxlabel: NOT_BERTH } }],
  ["plugin.exec.config", EXEC_CONFIG],
  ["plugin.raw_exec.config", RAW_EXEC_CONFIG],
]);
