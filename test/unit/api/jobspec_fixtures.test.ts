/**
 * berth's own jobspec fixtures (test/fixtures/jobs/), written in the idioms of Nomad's CSI demos and
 * e2e jobs, each decoded and compared whole with the JSON Nomad's jobspec2 gives for it: field
 * names from Nomad's `api` structs, durations in nanoseconds, the defaults jobspec2 fills
 * (templates, csi_plugin, vault), shorthands turned into Operand/RTarget, `port` blocks split into
 * reserved and dynamic ports. Fields a stanza leaves out stay out (the server fills Nomad's
 * defaults; job_stanzas_validate.test.ts).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { parseJobSpec } from "../../../src/api/index.js";
import type { Job, Task, TaskGroup } from "../../../src/api/index.js";

const S = 1_000_000_000;

const fixture = async (name: string) =>
  parseJobSpec(
    name,
    await readFile(new URL(`../../../../test/fixtures/jobs/${name}`, import.meta.url), "utf8"),
  );

/** What every decoded job carries besides its stanzas. */
function job(id: string, type: string, groups: TaskGroup[], rest: Partial<Job> = {}): Job {
  return {
    ID: id,
    Name: id,
    Namespace: "default",
    Type: type,
    // Nomad's default for a jobspec without `datacenters` (Job.Canonicalize, since 1.5).
    Datacenters: ["*"],
    Priority: 50,
    Stop: false,
    Status: "pending",
    TaskGroups: groups,
    ...rest,
    Version: 0,
    SubmitTime: 0,
    CreateIndex: 0,
    ModifyIndex: 0,
    JobModifyIndex: 0,
  };
}

function group(name: string, tasks: Task[], rest: Partial<TaskGroup> = {}): TaskGroup {
  return { Name: name, Count: 1, Volumes: {}, Tasks: tasks, RestartPolicy: null, ...rest };
}

function task(name: string, driver: string, config: Record<string, unknown>, rest: Partial<Task> = {}): Task {
  return {
    Name: name,
    Driver: driver,
    Config: config,
    Env: {},
    VolumeMounts: [],
    CSIPluginConfig: null,
    KillTimeout: 5 * S,
    RestartPolicy: null,
    ...rest,
  };
}

/** Nomad's template defaults (jobspec2 normalizeTemplates, api Template.Canonicalize). */
const TEMPLATE_DEFAULTS = {
  SourcePath: "",
  EmbeddedTmpl: "",
  ChangeMode: "restart",
  ChangeSignal: "",
  Splay: 5 * S,
  Perms: "0644",
  LeftDelim: "{{",
  RightDelim: "}}",
  Envvars: false,
  ErrMissingKey: false,
  Once: false,
  VaultGrace: 0,
};

describe("jobspec fixtures decode as Nomad decodes them", () => {
  it("csi-node-plugin: csi_plugin without mount_dir, template, resources, network, service, update", async () => {
    assert.deepEqual(
      await fixture("csi-node-plugin.nomad.hcl"),
      job(
        "storage-node",
        "system",
        [
          group(
            "nodes",
            [
              task(
                "plugin",
                "exec",
                {
                  command: "/usr/local/bin/storage-driver",
                  args: ["--endpoint=${CSI_ENDPOINT}", "--node=${node.unique.name}"],
                },
                {
                  CSIPluginConfig: {
                    ID: "storage",
                    Type: "node",
                    MountDir: "/csi",
                    StagePublishBaseDir: "/local/csi",
                    HealthTimeout: 30 * S,
                  },
                  KillTimeout: 30 * S,
                  User: "root",
                  Resources: { CPU: 256, MemoryMB: 128 },
                  KillSignal: "SIGINT",
                  Templates: [
                    {
                      ...TEMPLATE_DEFAULTS,
                      DestPath: "${NOMAD_TASK_DIR}/plugin.env",
                      EmbeddedTmpl: "NODE_ID=${node.unique.id}\nLOG_LEVEL=debug\n",
                      Envvars: true,
                    },
                  ],
                },
              ),
            ],
            {
              Networks: [{ DynamicPorts: [{ Label: "metrics" }] }],
              Services: [{ Name: "storage-metrics", Tags: ["csi", "node"], PortLabel: "metrics" }],
            },
          ),
        ],
        {
          Datacenters: ["dc1", "dc2"],
          Constraints: [{ LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "=" }],
          Update: { Stagger: 5 * S, MaxParallel: 1 },
          NodePool: "all",
        },
      ),
    );
  });

  it("web-app: canary update, lifecycle, ${NOMAD_*_DIR} mounts, kept network/service/artifact/logs/vault", async () => {
    assert.deepEqual(
      await fixture("web-app.nomad.hcl"),
      job(
        "web",
        "service",
        [
          group(
            "web",
            [
              task(
                "seed",
                "exec",
                {
                  command: "/bin/sh",
                  args: [
                    "-c",
                    "test -f $NOMAD_ALLOC_DIR/data/index.html || date > $NOMAD_ALLOC_DIR/data/index.html",
                  ],
                },
                {
                  VolumeMounts: [
                    {
                      Volume: "data",
                      Destination: "${NOMAD_ALLOC_DIR}/data",
                      ReadOnly: false,
                      PropagationMode: "private",
                    },
                  ],
                  Lifecycle: { Hook: "prestart", Sidecar: false },
                },
              ),
              task(
                "server",
                "exec",
                {
                  command: "/usr/bin/python3",
                  args: ["-m", "http.server", "8080", "--directory", "local/www"],
                },
                {
                  Env: { MODE: "prod" },
                  VolumeMounts: [
                    {
                      Volume: "data",
                      Destination: "${NOMAD_TASK_DIR}/www",
                      ReadOnly: true,
                      PropagationMode: "private",
                    },
                  ],
                  User: "nobody",
                  Resources: { Cores: 1, MemoryMB: 256, MemoryMaxMB: 512 },
                  Templates: [
                    {
                      ...TEMPLATE_DEFAULTS,
                      SourcePath: "local/app.tpl",
                      DestPath: "local/app.conf",
                      ChangeMode: "signal",
                      // Upper-cased, as Nomad's Template.Canonicalize does.
                      ChangeSignal: "SIGHUP",
                      Splay: 1 * S,
                      Perms: "0600",
                    },
                  ],
                  Artifacts: [{ GetterSource: "https://example.com/app.tar.gz", RelativeDest: "local/app" }],
                  LogConfig: { MaxFiles: 3, MaxFileSizeMB: 5 },
                  // jobspec2 normalizeVault's defaults under what the block wrote.
                  Vault: { Env: true, DisableFile: false, ChangeMode: "restart", Role: "web" },
                },
              ),
            ],
            {
              Count: 2,
              Volumes: {
                data: {
                  Name: "data",
                  Type: "csi",
                  Source: "web-data",
                  ReadOnly: false,
                  AccessMode: "multi-node-multi-writer",
                  AttachmentMode: "file-system",
                  MountOptions: null,
                  PerAlloc: false,
                },
              },
              RestartPolicy: { Attempts: 5, Interval: 1800 * S, Delay: 10 * S, Mode: "fail" },
              Update: { MaxParallel: 2, HealthCheck: "task_states", Canary: 1, AutoPromote: true },
              ShutdownDelay: 5 * S,
              Networks: [
                {
                  Mode: "bridge",
                  ReservedPorts: [{ Label: "admin", Value: 9090 }],
                  DynamicPorts: [{ Label: "http", To: 8080 }],
                },
              ],
              Services: [
                {
                  Name: "web",
                  PortLabel: "http",
                  Provider: "nomad",
                  Checks: [{ Type: "http", Path: "/health", Interval: 10 * S, Timeout: 2 * S }],
                },
              ],
            },
          ),
        ],
        { Priority: 70, Region: "global", Meta: { team: "storage" } },
      ),
    );
  });

  it("placement: every constraint shorthand, affinities with shorthands, spread targets", async () => {
    assert.deepEqual(
      await fixture("placement.nomad.hcl"),
      job(
        "placed",
        "batch",
        [
          group(
            "g",
            [
              task(
                "t",
                "raw_exec",
                { command: "/bin/true" },
                {
                  Constraints: [{ LTarget: "${attr.unique.hostname}", RTarget: "", Operand: "is_set" }],
                  Affinities: [{ LTarget: "${attr.kernel.version}", RTarget: "> 5.10", Operand: "version" }],
                },
              ),
            ],
            {
              Constraints: [
                { LTarget: "${attr.driver.exec.version}", RTarget: "^1.2.0", Operand: "semver" },
                { LTarget: "${meta.features}", RTarget: "ssd,nvme", Operand: "set_contains" },
                { LTarget: "${meta.maintenance}", RTarget: "", Operand: "is_not_set" },
              ],
              Affinities: [
                { LTarget: "${meta.zones}", RTarget: "a,b", Operand: "set_contains_any", Weight: -50 },
              ],
              Spreads: [{ Attribute: "${meta.rack}" }],
            },
          ),
        ],
        {
          Constraints: [
            { LTarget: "", RTarget: "true", Operand: "distinct_hosts" },
            { LTarget: "${meta.rack}", RTarget: "", Operand: "distinct_property" },
            { LTarget: "${attr.os.version}", RTarget: ">= 22.04", Operand: "version" },
            { LTarget: "${attr.cpu.arch}", RTarget: "^(amd64|arm64)$", Operand: "regexp" },
          ],
          Affinities: [{ LTarget: "${node.datacenter}", RTarget: "dc1", Operand: "=", Weight: 80 }],
          Spreads: [
            {
              Attribute: "${node.datacenter}",
              Weight: 100,
              SpreadTarget: [
                { Value: "dc1", Percent: 70 },
                { Value: "dc2", Percent: 30 },
              ],
            },
          ],
        },
      ),
    );
  });

  it("kept: periodic, parameterized, reschedule, ephemeral_disk, disconnect, dispatch_payload, identity, consul", async () => {
    assert.deepEqual(
      await fixture("kept.nomad.hcl"),
      job(
        "nightly",
        "batch",
        [
          group(
            "backup",
            [
              task(
                "dump",
                "exec",
                { command: "/usr/local/bin/dump" },
                {
                  DispatchPayload: { File: "input.json" },
                  // An unnamed identity block is the task's default identity (jobspec2 normalizeJob).
                  Identity: { Env: true, File: true },
                  Consul: { Namespace: "ops" },
                },
              ),
            ],
            {
              EphemeralDisk: { SizeMB: 500, Sticky: true },
              Disconnect: { LostAfter: 3600 * S, Replace: false },
            },
          ),
        ],
        {
          Reschedule: { Attempts: 2, Interval: 3600 * S, Unlimited: false },
          // A cron spec sets SpecType "cron" (jobspec2 normalizeJob).
          Periodic: { Specs: ["0 3 * * *"], ProhibitOverlap: true, TimeZone: "UTC", SpecType: "cron" },
          ParameterizedJob: { Payload: "optional", MetaRequired: ["snapshot"] },
        },
      ),
    );
  });
});

describe("jobspec stanzas beyond the fixtures", () => {
  const parse = (text: string) => parseJobSpec("s.hcl", text);

  it("job-level vault and secret blocks apply to every task without one; tasks directly in a job get a group", async () => {
    const j = await parse(`job "j" {
  vault {
    policies = ["read"]
  }
  task "solo" {
    driver = "exec"
  }
  group "g" {
    task "a" {
      driver = "exec"
      vault {
        role = "own"
        env  = false
      }
    }
  }
}`);
    assert.deepEqual(
      j.TaskGroups.map((g) => [g.Name, g.Tasks.map((t) => [t.Name, t.Vault])]),
      [
        ["solo", [["solo", { Env: true, DisableFile: false, ChangeMode: "restart", Policies: ["read"] }]]],
        ["g", [["a", { Env: false, DisableFile: false, ChangeMode: "restart", Role: "own" }]]],
      ],
    );
  });

  it("resources with devices and networks; scaling, migrate, ui and multiregion as Nomad's JSON", async () => {
    const j = await parse(`job "j" {
  multiregion {
    strategy {
      max_parallel = 1
    }
    region "west" {
      count = 2
      datacenters = ["w1"]
    }
  }
  ui {
    description = "d"
    link {
      label = "docs"
      url   = "https://example.com"
    }
  }
  group "g" {
    scaling {
      min = 1
      max = 3
    }
    migrate {
      max_parallel     = 2
      min_healthy_time = "15s"
    }
    task "t" {
      driver = "exec"
      resources {
        cpu = 500
        device "nvidia/gpu" {
          count = 2
          constraint {
            attribute = "\${device.attr.memory}"
            operator  = ">="
            value     = "2 GiB"
          }
        }
        network {
          mbits = 10
          port "db" {}
        }
      }
    }
  }
}`);
    assert.deepEqual(j.Multiregion, {
      Strategy: { MaxParallel: 1 },
      Regions: [{ Name: "west", Count: 2, Datacenters: ["w1"] }],
    });
    assert.deepEqual(j.UI, { Description: "d", Links: [{ Label: "docs", URL: "https://example.com" }] });
    const g = j.TaskGroups[0]!;
    assert.deepEqual(g.Scaling, { Min: 1, Max: 3, Type: "horizontal" });
    assert.deepEqual(g.Migrate, { MaxParallel: 2, MinHealthyTime: 15 * S });
    assert.deepEqual(g.Tasks[0]!.Resources, {
      CPU: 500,
      Networks: [{ MBits: 10, DynamicPorts: [{ Label: "db" }] }],
      Devices: [
        {
          Name: "nvidia/gpu",
          Count: 2,
          Constraints: [{ LTarget: "${device.attr.memory}", RTarget: "2 GiB", Operand: ">=" }],
        },
      ],
    });
  });

  it("refuses a key Nomad's jobspec does not have, inside kept stanzas too, naming where", async () => {
    await assert.rejects(
      parse(`job "j" {\n group "g" {\n service {\n nmae = "x"\n }\n task "t" {}\n }\n}`),
      /s\.hcl: job "j" group "g" service\[0\]: unsupported key "nmae" \(line 4\)/,
    );
    await assert.rejects(
      parse(`job "j" {\n group "g" {\n task "t" {\n resources {\n memroy = 1\n }\n }\n }\n}`),
      /task "t" resources: unsupported key "memroy"/,
    );
  });
});
