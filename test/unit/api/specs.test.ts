import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import {
  parseDuration,
  parseJobSpec,
  parseSize,
  parseVolumeSpec,
  SpecError,
} from "../../../src/api/index.js";

const example = (name: string) =>
  readFile(new URL(`../../../../examples/hostpath/${name}`, import.meta.url), "utf8");

const S = 1_000_000_000;

describe("example specs", () => {
  it("plugin.hcl → the plugin job", async () => {
    const job = await parseJobSpec("plugin.hcl", await example("plugin.hcl"));
    assert.deepEqual(job, {
      ID: "plugin",
      Name: "plugin",
      Namespace: "default",
      Type: "service",
      Datacenters: ["*"],
      Priority: 50,
      Stop: false,
      Status: "pending",
      TaskGroups: [
        {
          Name: "plugin",
          Count: 1,
          Volumes: {
            storage: {
              Name: "storage",
              Type: "host",
              Source: "hostpath-data",
              ReadOnly: false,
              AccessMode: "",
              AttachmentMode: "",
              MountOptions: null,
              PerAlloc: false,
            },
          },
          Tasks: [
            {
              Name: "plugin",
              Driver: "exec",
              Config: {
                command: "berth",
                args: [
                  "csi-hostpath",
                  "--endpoint=${CSI_ENDPOINT}",
                  "--node-id=${node.unique.id}",
                  "--state-dir=/srv/hostpath",
                ],
              },
              Env: {},
              VolumeMounts: [
                {
                  Volume: "storage",
                  Destination: "/srv/hostpath",
                  ReadOnly: false,
                  PropagationMode: "private",
                },
              ],
              CSIPluginConfig: {
                ID: "hostpath",
                Type: "monolith",
                MountDir: "/csi",
                // Nomad's default when the block leaves it out (api TaskCSIPluginConfig.Canonicalize).
                StagePublishBaseDir: "/local/csi",
                HealthTimeout: 30 * S,
              },
              KillTimeout: 5 * S,
              RestartPolicy: null,
            },
          ],
          RestartPolicy: null,
        },
      ],
      Version: 0,
      SubmitTime: 0,
      CreateIndex: 0,
      ModifyIndex: 0,
      JobModifyIndex: 0,
    });
  });

  it("job.hcl → the writer job with its CSI volume and mount", async () => {
    const job = await parseJobSpec("job.hcl", await example("job.hcl"));
    assert.equal(job.ID, "writer");
    assert.equal(job.Type, "batch");
    assert.deepEqual(job.TaskGroups, [
      {
        Name: "writer",
        Count: 1,
        Volumes: {
          data: {
            Name: "data",
            Type: "csi",
            Source: "demo",
            ReadOnly: false,
            AccessMode: "single-node-writer",
            AttachmentMode: "file-system",
            MountOptions: null,
            PerAlloc: false,
          },
        },
        Tasks: [
          {
            Name: "writer",
            Driver: "exec",
            Config: { command: "/bin/sh", args: ["-c", "echo hello > /data/hello.txt"] },
            Env: {},
            VolumeMounts: [
              { Volume: "data", Destination: "/data", ReadOnly: false, PropagationMode: "private" },
            ],
            CSIPluginConfig: null,
            KillTimeout: 5 * S,
            RestartPolicy: null,
          },
        ],
        RestartPolicy: null,
      },
    ]);
  });

  it("volume.hcl → only the keys the spec sets", async () => {
    const vol = await parseVolumeSpec("volume.hcl", await example("volume.hcl"));
    assert.deepEqual(vol, {
      ID: "demo",
      Name: "demo",
      PluginID: "hostpath",
      RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
      RequestedCapacityMin: 10 * 1024 * 1024,
      RequestedCapacityMax: 1024 * 1024 * 1024,
    });
  });
});

describe("jobspec HCL", () => {
  it("reads every supported setting", async () => {
    const job = await parseJobSpec(
      "full.hcl",
      `job "web" {
        type        = "service"
        datacenters = ["dc1", "dc2"]
        priority    = 70
        namespace   = "prod"
        group "b" {
          count = 3
          restart {
            attempts = 5
            interval = "1h30m"
            mode     = "delay"
          }
          volume "data" {
            type            = "csi"
            source          = "vol"
            read_only       = true
            access_mode     = "multi-node-reader-only"
            attachment_mode = "file-system"
            per_alloc       = true
            mount_options {
              fs_type     = "ext4"
              mount_flags = ["noatime"]
            }
          }
          task "t2" {
            driver       = "exec"
            kill_timeout = "2m"
            env {
              HOME = "/tmp"
              N    = "\${NOMAD_ALLOC_INDEX}"
            }
            volume_mount {
              volume           = "data"
              destination      = "/srv"
              read_only        = true
              propagation_mode = "host-to-task"
            }
            volume_mount {
              volume      = "data"
              destination = "/other"
            }
            restart {
              attempts = 1
            }
          }
          task "t1" {
            driver = "raw_exec"
            csi_plugin {
              id                     = "p"
              type                   = "node"
              mount_dir              = "/csi"
              stage_publish_base_dir = "/local/csi"
              health_timeout         = "1m30s"
            }
          }
        }
        group "a" {}
      }`,
    );
    assert.equal(job.Namespace, "prod");
    assert.deepEqual(job.Datacenters, ["dc1", "dc2"]);
    assert.equal(job.Priority, 70);
    // Groups and tasks keep the order they are written in, not the decoder's sorted order.
    assert.deepEqual(
      job.TaskGroups.map((g) => g.Name),
      ["b", "a"],
    );
    const [b] = job.TaskGroups;
    assert.deepEqual(
      b!.Tasks.map((t) => t.Name),
      ["t2", "t1"],
    );
    assert.equal(b!.Count, 3);
    // Fields the restart block leaves out come from the job type's defaults.
    assert.deepEqual(b!.RestartPolicy, { Attempts: 5, Interval: 5400 * S, Delay: 15 * S, Mode: "delay" });
    assert.deepEqual(b!.Volumes.data, {
      Name: "data",
      Type: "csi",
      Source: "vol",
      ReadOnly: true,
      AccessMode: "multi-node-reader-only",
      AttachmentMode: "file-system",
      MountOptions: { FSType: "ext4", MountFlags: ["noatime"] },
      PerAlloc: true,
    });
    const [t2, t1] = b!.Tasks;
    assert.equal(t2!.KillTimeout, 120 * S);
    assert.deepEqual(t2!.Env, { HOME: "/tmp", N: "${NOMAD_ALLOC_INDEX}" });
    assert.deepEqual(t2!.VolumeMounts, [
      { Volume: "data", Destination: "/srv", ReadOnly: true, PropagationMode: "host-to-task" },
      { Volume: "data", Destination: "/other", ReadOnly: false, PropagationMode: "private" },
    ]);
    // A task's restart block merges over its group's (Nomad's Task.Canonicalize), not the defaults.
    assert.deepEqual(t2!.RestartPolicy, { Attempts: 1, Interval: 5400 * S, Delay: 15 * S, Mode: "delay" });
    assert.deepEqual(t1!.CSIPluginConfig, {
      ID: "p",
      Type: "node",
      MountDir: "/csi",
      StagePublishBaseDir: "/local/csi",
      HealthTimeout: 90 * S,
    });
  });

  it("reads constraint blocks at job, group and task level (operator defaults to =)", async () => {
    const job = await parseJobSpec(
      "c.hcl",
      `job "j" {
  constraint {
    attribute = "\${node.unique.name}"
    value     = "B"
  }
  group "g" {
    constraint {
      attribute = "\${node.datacenter}"
      operator  = "!="
      value     = "dc9"
    }
    task "t" {
      driver = "raw_exec"
      constraint {
        attribute = "\${node.class}"
        operator  = "=="
        value     = "gpu"
      }
    }
  }
}`,
    );
    assert.deepEqual(job.Constraints, [{ LTarget: "${node.unique.name}", RTarget: "B", Operand: "=" }]);
    assert.deepEqual(job.TaskGroups[0]!.Constraints, [
      { LTarget: "${node.datacenter}", RTarget: "dc9", Operand: "!=" },
    ]);
    assert.deepEqual(job.TaskGroups[0]!.Tasks[0]!.Constraints, [
      { LTarget: "${node.class}", RTarget: "gpu", Operand: "==" },
    ]);
    assert.equal(
      "Constraints" in (await parseJobSpec("n.hcl", `job "j" {\n group "g" {\n task "t" {}\n }\n}`)),
      false,
    );
    // Nomad's shorthand: the operator is the key, the value RTarget (jobspec2 decodeConstraint).
    const hosts = await parseJobSpec(
      "dh.hcl",
      `job "j" {\n constraint {\n distinct_hosts = true\n }\n group "g" {\n task "t" {}\n }\n}`,
    );
    assert.deepEqual(hosts.Constraints, [{ LTarget: "", RTarget: "true", Operand: "distinct_hosts" }]);
  });

  it("accepts env as a map attribute as well as a block", async () => {
    const job = await parseJobSpec(
      "m.hcl",
      `job "j" {\n group "g" {\n task "t" {\n env = { A = "1" }\n }\n }\n}`,
    );
    assert.deepEqual(job.TaskGroups[0]!.Tasks[0]!.Env, { A: "1" });
  });

  const rejects = async (text: string, pattern: RegExp) => {
    await assert.rejects(parseJobSpec("bad.hcl", text), (err: unknown) => {
      assert.ok(err instanceof SpecError, `a SpecError, got ${String(err)}`);
      assert.match(err.message, pattern);
      return true;
    });
  };

  it("names unknown keys and blocks with the file and the place", async () => {
    await rejects(
      `job "j" {\n group "g" {\n spreed {\n }\n foo = 1\n }\n}`,
      /^bad\.hcl: job "j" group "g": unsupported keys "foo", "spreed" \(line 5\)$/,
    );
    // A variable block is HCL2's language (hcl2/variables.ts): one with no value is Nomad's error.
    await rejects(`job "j" {}\nvariable "x" {}`, /^bad\.hcl:2: Unset variable "x"; /);
    await rejects(`job "j" {}\nvariabel "x" {}`, /^bad\.hcl: unsupported key "variabel" \(line 2\)$/);
    await rejects(`job "j" {\n meta {\n a = "b"\n }\n mta = 1\n}`, /job "j": unsupported key "mta"/);
  });

  it("rejects wrong types clearly", async () => {
    await rejects(
      `job "j" {\n group "g" {\n count = "x"\n }\n}`,
      /group "g": count must be a number, got string "x"/,
    );
    await rejects(`job "j" {\n group "g" {\n count = 1.5\n }\n}`, /count must be a whole number/);
    await rejects(`job "j" {\n datacenters = "dc1"\n}`, /datacenters must be a list of strings/);
    await rejects(
      `job "j" {\n group "g" {\n task "t" {\n kill_timeout = "5 parsecs"\n }\n }\n}`,
      /task "t": kill_timeout must be a duration such as "30s"/,
    );
    await rejects(
      `job "j" {\n group "g" {\n volume "v" {\n read_only = "yes"\n }\n }\n}`,
      /volume "v": read_only must be true or false/,
    );
  });

  it("rejects repeated single blocks, duplicate labels and a missing or second job", async () => {
    await rejects(
      `job "j" {\n group "g" {\n task "t" {\n config {\n }\n config {\n }\n }\n }\n}`,
      /only one config block is allowed, found 2/,
    );
    await rejects(`job "j" {\n group "g" {}\n group "g" {}\n}`, /group "g" is defined 2 times/);
    await rejects(`job "a" {}\njob "b" {}`, /expected exactly one job block, found 2/);
    await rejects(``, /expected exactly one job block, found 0/);
  });

  it("reports HCL syntax errors with the file and position", async () => {
    await rejects(`job "j" {\n count = \n}`, /^bad\.hcl:2,\d+-\d+(,\d+)?: /);
  });
});

describe("jobspec JSON", () => {
  const job = { ID: "j", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }] };

  it("takes {Job: {...}} and the bare job, as written", async () => {
    assert.deepEqual(await parseJobSpec("j.json", JSON.stringify({ Job: job })), job);
    assert.deepEqual(await parseJobSpec("j.json", JSON.stringify(job, null, 2)), job);
  });

  it("takes HCL's JSON syntax, blocks as objects, in the order written", async () => {
    const hclJson = {
      job: {
        writer: {
          type: "batch",
          group: {
            writer: {
              volume: {
                data: {
                  type: "csi",
                  source: "demo",
                  access_mode: "single-node-writer",
                  attachment_mode: "file-system",
                },
              },
              task: {
                writer: {
                  driver: "exec",
                  config: { command: "/bin/sh", args: ["-c", "echo hello > /data/hello.txt"] },
                  volume_mount: [{ volume: "data", destination: "/data" }],
                },
              },
            },
          },
        },
      },
    };
    assert.deepEqual(
      await parseJobSpec("job.json", JSON.stringify(hclJson)),
      await parseJobSpec("job.hcl", await example("job.hcl")),
    );
    const ordered = { job: { j: { group: { z: { task: { t2: {}, t1: {} } }, a: {} } } } };
    const job = await parseJobSpec("o.json", JSON.stringify(ordered));
    assert.deepEqual(
      job.TaskGroups.map((g) => [g.Name, g.Tasks.map((t) => t.Name)]),
      [
        ["z", ["t2", "t1"]],
        ["a", []],
      ],
    );
    await assert.rejects(
      parseJobSpec("x.json", '{"job": {"j": {"bogus": 1}}}'),
      /x\.json: job "j": unsupported key "bogus"/,
    );
  });

  it("rejects JSON that is not a job object", async () => {
    await assert.rejects(parseJobSpec("j.json", "[1]"), /j\.json: a JSON jobspec must be a job object/);
    await assert.rejects(
      parseJobSpec("j.json", '{"Job": 3}'),
      /j\.json: a JSON jobspec must be a job object/,
    );
  });
});

describe("volume spec HCL", () => {
  it("reads every supported setting", async () => {
    const vol = await parseVolumeSpec(
      "v.hcl",
      `id           = "v"
      name         = "vee"
      namespace    = "prod"
      type         = "csi"
      plugin_id    = "p"
      external_id  = "ext-1"
      capacity_min = "1G"
      capacity_max = "500M"
      snapshot_id  = "snap"
      clone_id     = "clone"
      capability {
        access_mode     = "single-node-writer"
        attachment_mode = "file-system"
      }
      capability {
        access_mode     = "single-node-reader-only"
        attachment_mode = "block-device"
      }
      mount_options {
        fs_type     = "xfs"
        mount_flags = ["ro", "noatime"]
      }
      secrets {
        token = "s3cr3t"
      }
      parameters {
        size = "fast"
      }
      context {
        zone = "a"
      }
      topology_request {
        required {
          topology {
            segments {
              rack = "r1"
            }
          }
          topology {
            segments {
              rack = "r2"
              zone = "z"
            }
          }
        }
        preferred {
          topology {
            segments {
              rack = "r1"
            }
          }
        }
      }`,
    );
    assert.deepEqual(vol, {
      ID: "v",
      Name: "vee",
      Namespace: "prod",
      ExternalID: "ext-1",
      PluginID: "p",
      RequestedCapabilities: [
        { AccessMode: "single-node-writer", AttachmentMode: "file-system" },
        { AccessMode: "single-node-reader-only", AttachmentMode: "block-device" },
      ],
      MountOptions: { FSType: "xfs", MountFlags: ["ro", "noatime"] },
      Secrets: { token: "s3cr3t" },
      Parameters: { size: "fast" },
      Context: { zone: "a" },
      RequestedCapacityMin: 1e9,
      RequestedCapacityMax: 5e8,
      SnapshotID: "snap",
      CloneID: "clone",
      RequestedTopologies: {
        Required: [{ Segments: { rack: "r1" } }, { Segments: { rack: "r2", zone: "z" } }],
        Preferred: [{ Segments: { rack: "r1" } }],
      },
    });
  });

  it("refuses what Nomad's decoder refuses, naming the line; warns about top-level keys Nomad ignores", async () => {
    const warnings: string[] = [];
    const warn = (m: string) => warnings.push(m);
    // Nomad ignores unknown top-level keys (mapstructure); berth too, but says so.
    assert.deepEqual(await parseVolumeSpec("v.hcl", `id = "v"\ntype = "csi"\nsize = 3\n`, { warn }), {
      ID: "v",
    });
    assert.deepEqual(warnings, ['v.hcl:3:1: ignoring key "size": Nomad\'s volume spec has no such key']);
    await assert.rejects(parseVolumeSpec("v.hcl", `id = "v"\n`), /^SpecError: v\.hcl: type is missing/);
    await assert.rejects(
      parseVolumeSpec("v.hcl", `type = "host"`),
      /^SpecError: v\.hcl:1:1: type "host" is not a volume type berth knows/,
    );
    await assert.rejects(
      parseVolumeSpec("v.hcl", `type = "csi"\ncapacity_min = "lots"`),
      /^SpecError: v\.hcl:2:16: invalid capacity_min: could not parse value as bytes: "" is not a number/,
    );
    await assert.rejects(
      parseVolumeSpec("v.hcl", `type = "csi"\ncapability {\n mode = "x"\n}`),
      /^SpecError: v\.hcl:3:2: capability: invalid key: mode \(valid keys: access_mode, attachment_mode\)/,
    );
    await assert.rejects(
      parseVolumeSpec("v.hcl", `type = "csi"\ntopology_request {\n require {\n }\n}`),
      /^SpecError: v\.hcl:3:2: topology_request: invalid key: require/,
    );
    await assert.rejects(
      parseVolumeSpec("v.hcl", `type = "csi"\nid = `),
      /^SpecError: v\.hcl:2:6: expected a value/,
    );
  });

  it("takes HCL's JSON syntax (lowercase keys) like the HCL", async () => {
    const hclJson = {
      id: "demo",
      name: "demo",
      type: "csi",
      plugin_id: "hostpath",
      capacity_min: "10MiB",
      capacity_max: "1GiB",
      capability: { access_mode: "single-node-writer", attachment_mode: "file-system" },
    };
    assert.deepEqual(
      await parseVolumeSpec("v.json", JSON.stringify(hclJson)),
      await parseVolumeSpec("volume.hcl", await example("volume.hcl")),
    );
    // mapstructure matches names ignoring case: "ID" is the id, as in Nomad.
    assert.deepEqual(await parseVolumeSpec("v.json", '{"type": "csi", "ID": "b"}'), { ID: "b" });
    await assert.rejects(
      parseVolumeSpec("v.json", '{"type": "csi",\n "id": ["a"]}'),
      /^SpecError: v\.json:2:2: id must be a string, got a list/,
    );
  });

  it("takes the API's JSON: the bare volume or {Volumes: [vol]}", async () => {
    const vol = { ID: "v", PluginID: "p", RequestedCapacityMin: 5 };
    assert.deepEqual(await parseVolumeSpec("v.json", JSON.stringify(vol)), vol);
    assert.deepEqual(await parseVolumeSpec("v.json", JSON.stringify({ Volumes: [vol] })), vol);
    await assert.rejects(
      parseVolumeSpec("v.json", JSON.stringify({ Volumes: [vol, vol] })),
      /exactly one volume/,
    );
    await assert.rejects(parseVolumeSpec("v.json", "null"), /a JSON volume spec must be a volume object/);
  });
});

describe("durations", () => {
  const cases: [string, number | undefined][] = [
    ["30s", 30 * S],
    ["2m", 120 * S],
    ["1h30m", 5400 * S],
    ["1.5h", 5400 * S],
    ["500ms", 5e8],
    ["10us", 1e4],
    ["7ns", 7],
    ["0", 0],
    ["1h2m3s4ms", 3723 * S + 4e6],
    ["", undefined],
    ["30", undefined],
    ["s", undefined],
    ["1d", undefined],
    ["-1s", undefined],
    ["1h 2m", undefined],
  ];
  for (const [text, ns] of cases) {
    it(`${JSON.stringify(text)} → ${ns}`, () => assert.equal(parseDuration(text), ns));
  }
});

describe("sizes", () => {
  const cases: [string, number | undefined][] = [
    ["10MiB", 10 * 2 ** 20],
    ["1GiB", 2 ** 30],
    ["1G", 1e9],
    ["500M", 5e8],
    ["1gb", 1e9],
    ["2 KiB", 2048],
    ["1.5GiB", 1.5 * 2 ** 30],
    ["1TB", 1e12],
    ["4096", 4096],
    ["12B", 12],
    ["", undefined],
    ["MiB", undefined],
    ["10 parsecs", undefined],
    ["-1G", undefined],
  ];
  for (const [text, bytes] of cases) {
    it(`${JSON.stringify(text)} → ${bytes}`, () => assert.equal(parseSize(text), bytes));
  }
});
