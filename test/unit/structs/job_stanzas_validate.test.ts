/**
 * Jobs in Nomad's JSON (PUT /v1/jobs bodies): every field Nomad's Go `api` package sends — all of
 * them, nulls and zero values included — is accepted; a field that is none of Nomad's is refused by
 * name; stanzas get Nomad's canonical defaults (api `Canonicalize`) and are checked with Nomad's
 * `Validate` texts; stanzas berth keeps but does not act on are stored as written.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BerthError } from "../../../src/structs/errors.js";
import { validateJob } from "../../../src/structs/job_validate.js";

const S = 1_000_000_000;

function refusedAt(fn: () => unknown, field: string, message: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof BerthError, String(err));
    assert.equal(err.code, "ERR_VALIDATION");
    assert.equal(err.field, field);
    assert.match(err.message, message);
    return true;
  });
}

/** A task as Nomad's Go client serialises an api.Task with only Name, Driver and Config set. */
function goTask(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    Name: "t",
    Driver: "exec",
    User: "",
    Lifecycle: null,
    Config: { command: "/bin/true" },
    Constraints: null,
    Affinities: null,
    Env: null,
    Services: null,
    Resources: null,
    RestartPolicy: null,
    Meta: null,
    KillTimeout: null,
    LogConfig: null,
    Artifacts: null,
    Vault: null,
    Consul: null,
    Templates: null,
    DispatchPayload: null,
    VolumeMounts: null,
    Leader: false,
    ShutdownDelay: 0,
    KillSignal: "",
    Kind: "",
    ScalingPolicies: null,
    Secrets: null,
    Identity: null,
    Identities: null,
    Actions: null,
    Schedule: null,
    ...over,
  };
}

function goGroup(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    Name: "g",
    Count: null,
    Constraints: null,
    Affinities: null,
    Tasks: [goTask()],
    Spreads: null,
    Volumes: null,
    RestartPolicy: null,
    Disconnect: null,
    ReschedulePolicy: null,
    EphemeralDisk: null,
    Update: null,
    Migrate: null,
    Networks: null,
    Meta: null,
    Services: null,
    ShutdownDelay: null,
    MaxRunDuration: null,
    StopAfterClientDisconnect: null,
    MaxClientDisconnect: null,
    Scaling: null,
    Consul: null,
    PreventRescheduleOnLost: null,
    ...over,
  };
}

function goJob(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    Region: null,
    Namespace: null,
    ID: "j",
    Name: null,
    Type: null,
    Priority: null,
    AllAtOnce: null,
    Datacenters: null,
    NodePool: null,
    Constraints: null,
    Affinities: null,
    TaskGroups: [goGroup()],
    Update: null,
    Multiregion: null,
    Spreads: null,
    Periodic: null,
    ParameterizedJob: null,
    Reschedule: null,
    Migrate: null,
    Meta: null,
    UI: null,
    ConsulToken: null,
    VaultToken: null,
    Stop: null,
    ParentID: null,
    Dispatched: false,
    DispatchIdempotencyToken: null,
    Payload: null,
    ConsulNamespace: null,
    VaultNamespace: null,
    NomadTokenID: null,
    Status: null,
    StatusDescription: null,
    Stable: null,
    Version: null,
    SubmitTime: null,
    CreateIndex: null,
    ModifyIndex: null,
    JobModifyIndex: null,
    VersionTag: null,
    ...over,
  };
}

describe("Nomad's JSON jobs", () => {
  it("accepts every field Nomad's Go client sends, and fills Nomad's defaults", () => {
    const job = validateJob(goJob());
    assert.equal(job.Region, "global");
    assert.equal(job.NodePool, "default");
    assert.equal(job.AllAtOnce, false);
    // Service jobs get Nomad's DefaultUpdateStrategy at job level, and their groups inherit it.
    const update = {
      Stagger: 30 * S,
      MaxParallel: 1,
      HealthCheck: "checks",
      MinHealthyTime: 10 * S,
      HealthyDeadline: 300 * S,
      ProgressDeadline: 600 * S,
      Canary: 0,
      AutoRevert: false,
      AutoPromote: false,
    };
    assert.deepEqual(job.Update, update);
    assert.deepEqual(job.TaskGroups[0]!.Update, update);
    const t = job.TaskGroups[0]!.Tasks[0]!;
    assert.deepEqual(t.Resources, { CPU: 100, Cores: 0, MemoryMB: 300, MemoryMaxMB: 0 });
    assert.equal(t.Lifecycle, null);
    assert.deepEqual(t.Templates, []);
    assert.equal(t.KillSignal, "");
    assert.equal(t.KillTimeout, 5 * S);
    // Nomad's api Canonicalize: a task without a logs block gets the default rotation.
    assert.deepEqual(t.LogConfig, { MaxFiles: 10, MaxFileSizeMB: 10, Disabled: false });
    for (const k of ["Services", "Vault", "Artifacts", "Identity"] as const) {
      assert.equal(k in t, false, `${k} not set`);
    }
    // Batch jobs without an update block have none.
    assert.equal(validateJob(goJob({ Type: "batch" })).TaskGroups[0]!.Update, null);
  });

  it("refuses a field that is not Nomad's, naming it (and the field meant when only case differs)", () => {
    refusedAt(
      () => validateJob(goJob({ TaskGroups: [goGroup({ Tasks: [{ ...goTask(), Drvier: "exec" }] })] })),
      "Job.TaskGroups[0].Tasks[0].Drvier",
      /^Job\.TaskGroups\[0\]\.Tasks\[0\]\.Drvier: unknown field$/,
    );
    refusedAt(() => validateJob(goJob({ Bogus: 1 })), "Job.Bogus", /unknown field/);
    refusedAt(
      () => validateJob(goJob({ TaskGroups: [goGroup({ count: 2 })] })),
      "Job.TaskGroups[0].count",
      /unknown field \(did you mean "Count"\?\)/,
    );
    refusedAt(
      () =>
        validateJob(
          goJob({ TaskGroups: [goGroup({ Tasks: [goTask({ Resources: { CPU: 1, Memory: 64 } })] })] }),
        ),
      "Job.TaskGroups[0].Tasks[0].Resources.Memory",
      /unknown field/,
    );
    refusedAt(
      () => validateJob(goJob({ Update: { Canary: 1, MaxParalel: 2 } })),
      "Job.Update.MaxParalel",
      /unknown field/,
    );
  });

  it("resources: Nomad's canonical values and Validate texts", () => {
    const res = (r: unknown) =>
      validateJob(goJob({ TaskGroups: [goGroup({ Tasks: [goTask({ Resources: r })] })] })).TaskGroups[0]!
        .Tasks[0]!.Resources;
    assert.deepEqual(res({ Cores: 2 }), { CPU: 0, Cores: 2, MemoryMB: 300, MemoryMaxMB: 0 });
    assert.deepEqual(res({ CPU: 500, MemoryMB: 256, MemoryMaxMB: 1024, Networks: [{ MBits: 10 }] }), {
      CPU: 500,
      Cores: 0,
      MemoryMB: 256,
      MemoryMaxMB: 1024,
      Networks: [{ MBits: 10 }],
    });
    const field = "Job.TaskGroups[0].Tasks[0].Resources";
    refusedAt(() => res({ CPU: 0 }), `${field}.CPU`, /minimum CPU value is 1; got 0/);
    refusedAt(() => res({ MemoryMB: 5 }), `${field}.MemoryMB`, /minimum MemoryMB value is 10; got 5/);
    refusedAt(
      () => res({ CPU: 100, Cores: 1 }),
      field,
      /Task can only ask for 'cpu' or 'cores' resource, not both\./,
    );
    refusedAt(
      () => res({ MemoryMB: 512, MemoryMaxMB: 256 }),
      `${field}.MemoryMaxMB`,
      /MemoryMaxMB value \(256\) should be larger than MemoryMB value \(512\)/,
    );
  });

  it("templates: Nomad's defaults and Validate texts", () => {
    const tmpl = (t: Record<string, unknown>) =>
      validateJob(goJob({ TaskGroups: [goGroup({ Tasks: [goTask({ Templates: [t] })] })] })).TaskGroups[0]!
        .Tasks[0]!.Templates![0];
    assert.deepEqual(tmpl({ EmbeddedTmpl: "x", DestPath: "local/x", ChangeMode: "signal" }), {
      SourcePath: "",
      DestPath: "local/x",
      EmbeddedTmpl: "x",
      ChangeMode: "signal",
      ChangeSignal: "SIGHUP",
      Splay: 5 * S,
      Perms: "0644",
      LeftDelim: "{{",
      RightDelim: "}}",
      Envvars: false,
      ErrMissingKey: false,
      Once: false,
      VaultGrace: 0,
      ChangeScript: null,
      Wait: null,
    });
    assert.equal(
      tmpl({ EmbeddedTmpl: "x", DestPath: "${NOMAD_SECRETS_DIR}/s" })!.DestPath,
      "${NOMAD_SECRETS_DIR}/s",
    );
    assert.equal(tmpl({ EmbeddedTmpl: "x", DestPath: "../alloc/shared" })!.DestPath, "../alloc/shared");
    const f = "Job.TaskGroups[0].Tasks[0].Templates[0]";
    refusedAt(
      () => tmpl({ DestPath: "local/x" }),
      f,
      /Must specify a source path or have an embedded template/,
    );
    refusedAt(
      () => tmpl({ EmbeddedTmpl: "x" }),
      `${f}.DestPath`,
      /Must specify a destination for the template/,
    );
    refusedAt(
      () => tmpl({ EmbeddedTmpl: "x", DestPath: "../../etc/x" }),
      `${f}.DestPath`,
      /escapes allocation directory/,
    );
    refusedAt(
      () => tmpl({ EmbeddedTmpl: "x", DestPath: "l", ChangeMode: "reload" }),
      `${f}.ChangeMode`,
      /Invalid change mode/,
    );
    refusedAt(() => tmpl({ EmbeddedTmpl: "x", DestPath: "l", Perms: "0999" }), `${f}.Perms`, /as octal/);
    refusedAt(
      () => tmpl({ EmbeddedTmpl: "x", DestPath: "l", ChangeMode: "signal", Envvars: true }),
      `${f}.Envvars`,
      /cannot use signals with env var templates/,
    );
  });

  it("update: a group's block merges over the job's, checked with Nomad's texts", () => {
    const job = validateJob(
      goJob({
        Update: { MaxParallel: 3, HealthyDeadline: 120 * S },
        TaskGroups: [goGroup({ Update: { Canary: 1, AutoPromote: true } }), goGroup({ Name: "h" })],
      }),
    );
    assert.equal(job.Update!.MaxParallel, 3);
    assert.deepEqual(
      [job.TaskGroups[0]!.Update, job.TaskGroups[1]!.Update].map((u) => [
        u!.MaxParallel,
        u!.Canary,
        u!.AutoPromote,
        u!.HealthyDeadline,
      ]),
      [
        [3, 1, true, 120 * S],
        [3, 0, false, 120 * S],
      ],
    );
    refusedAt(
      () => validateJob(goJob({ TaskGroups: [goGroup({ Update: { Canary: -1 } })] })),
      "Job.TaskGroups[0].Update.Canary",
      /Canary count can not be less than zero: -1 < 0/,
    );
    refusedAt(
      () => validateJob(goJob({ Update: { AutoPromote: true } })),
      "Job.Update.AutoPromote",
      /Auto Promote requires a Canary count greater than zero/,
    );
    refusedAt(
      () => validateJob(goJob({ Update: { MinHealthyTime: 400 * S } })),
      "Job.Update.MinHealthyTime",
      /Minimum healthy time must be less than healthy deadline: 6m40s > 5m0s/,
    );
  });

  it("lifecycle, kill_signal, affinity and spread: Nomad's values and texts", () => {
    const t = (over: Record<string, unknown>) =>
      validateJob(goJob({ TaskGroups: [goGroup({ Tasks: [goTask(over)] })] })).TaskGroups[0]!.Tasks[0]!;
    assert.deepEqual(t({ Lifecycle: { Hook: "poststart", Sidecar: true } }).Lifecycle, {
      Hook: "poststart",
      Sidecar: true,
    });
    assert.equal(t({ Lifecycle: { Hook: "", Sidecar: false } }).Lifecycle, null);
    const f = "Job.TaskGroups[0].Tasks[0]";
    refusedAt(() => t({ Lifecycle: { Hook: "prerun" } }), `${f}.Lifecycle.Hook`, /invalid hook: prerun/);
    refusedAt(() => t({ Lifecycle: { Sidecar: true } }), `${f}.Lifecycle.Hook`, /no lifecycle hook provided/);
    assert.equal(t({ KillSignal: "SIGINT" }).KillSignal, "SIGINT");
    refusedAt(() => t({ KillSignal: "SIGNOPE" }), `${f}.KillSignal`, /unknown signal "SIGNOPE"/);

    const aff = t({
      Affinities: [{ LTarget: "${node.datacenter}", RTarget: "dc1", Operand: "=" }],
    }).Affinities;
    assert.deepEqual(aff, [{ LTarget: "${node.datacenter}", RTarget: "dc1", Operand: "=", Weight: 50 }]);
    refusedAt(
      () => t({ Affinities: [{ LTarget: "${node.datacenter}", RTarget: "dc1", Operand: "=", Weight: 0 }] }),
      `${f}.Affinities[0].Weight`,
      /Affinity weight cannot be zero/,
    );
    refusedAt(
      () => t({ Affinities: [{ LTarget: "${node.datacenter}", RTarget: "dc1", Operand: "=", Weight: 101 }] }),
      `${f}.Affinities[0].Weight`,
      /Affinity weight must be within the range \[-100,100\]/,
    );
    refusedAt(
      () => t({ Affinities: [{ LTarget: "${node.datacenter}", RTarget: "x", Operand: "distinct_hosts" }] }),
      `${f}.Affinities[0].Operand`,
      /Unknown affinity operator "distinct_hosts"/,
    );
    const spreads = (s: unknown) => validateJob(goJob({ Spreads: s })).Spreads;
    assert.deepEqual(
      spreads([{ Attribute: "${node.datacenter}", SpreadTarget: [{ Value: "dc1", Percent: 60 }] }]),
      [{ Attribute: "${node.datacenter}", Weight: 50, SpreadTarget: [{ Value: "dc1", Percent: 60 }] }],
    );
    refusedAt(
      () =>
        spreads([
          {
            Attribute: "${node.datacenter}",
            SpreadTarget: [
              { Value: "a", Percent: 60 },
              { Value: "b", Percent: 50 },
            ],
          },
        ]),
      "Job.Spreads[0].SpreadTarget",
      /Sum of spread target percentages must not be greater than 100%; got 110%/,
    );
  });

  it("keeps stanzas berth does not act on as written, and never stores Consul/Vault tokens", () => {
    const service = { Name: "web", PortLabel: "http", Checks: [{ Type: "http", Path: "/" }] };
    const job = validateJob(
      goJob({
        ConsulToken: "secret-consul",
        VaultToken: "secret-vault",
        Type: "batch",
        Periodic: { Specs: ["@daily"], SpecType: "cron" },
        TaskGroups: [
          goGroup({
            Networks: [{ Mode: "bridge", DynamicPorts: [{ Label: "http" }] }],
            Services: [service],
            Tasks: [goTask({ Vault: { Role: "r" }, Artifacts: [{ GetterSource: "https://x" }] })],
          }),
        ],
      }),
    );
    // Periodic is honoured now (structs/periodic.ts): stored in Nomad's canonical form.
    assert.deepEqual(job.Periodic, {
      Enabled: true,
      Spec: "",
      Specs: ["@daily"],
      SpecType: "cron",
      ProhibitOverlap: false,
      TimeZone: "UTC",
    });
    assert.deepEqual(job.TaskGroups[0]!.Services, [service]);
    assert.deepEqual(job.TaskGroups[0]!.Networks, [{ Mode: "bridge", DynamicPorts: [{ Label: "http" }] }]);
    assert.deepEqual(job.TaskGroups[0]!.Tasks[0]!.Vault, { Role: "r" });
    assert.equal(JSON.stringify(job).includes("secret-"), false);
    refusedAt(() => validateJob(goJob({ Periodic: "daily" })), "Job.Periodic", /must be an object/);
    refusedAt(
      () => validateJob(goJob({ TaskGroups: [goGroup({ Services: [1] })] })),
      "Job.TaskGroups[0].Services[0]",
      /must be an object/,
    );
  });

  it("a driver no berth node runs is registrable (placement reports missing drivers)", () => {
    const job = validateJob(goJob({ TaskGroups: [goGroup({ Tasks: [goTask({ Driver: "podman" })] })] }));
    assert.equal(job.TaskGroups[0]!.Tasks[0]!.Driver, "podman");
  });
});
