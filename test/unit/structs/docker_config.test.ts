/**
 * The docker driver's `config` schema (structs/docker_config.ts), as a jobspec in HCL decodes it
 * (blocks as lists of objects) and through job validation: Nomad's keys read with Nomad's defaults,
 * keys Nomad does not know refused as unknown, Nomad's keys berth does not implement refused by
 * name, malformed values refused naming the field. Pure.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseJobHcl } from "../../../src/api/specs/jobspec.js";
import { DEFAULT_IMAGE_PULL_TIMEOUT_MS, dockerTaskConfig } from "../../../src/structs/docker_config.js";
import { validateJob } from "../../../src/structs/job_validate.js";

/** A job of one docker task whose `config` block holds `config` (HCL lines). */
async function jobWith(config: string) {
  const job = await parseJobHcl(
    "a.hcl",
    `job "x" {
  group "g" {
    task "t" {
      driver = "docker"
      config {
${config}
      }
    }
  }
}
`,
  );
  return JSON.parse(JSON.stringify(job)) as {
    TaskGroups: { Tasks: { Config: Record<string, unknown> }[] }[];
  };
}

describe("docker task config", () => {
  it("reads Nomad's keys from HCL, blocks included", async () => {
    const job = await jobWith(`
        image              = "app:1"
        command            = "/bin/app"
        args               = ["-v"]
        entrypoint         = ["/init"]
        work_dir           = "/w"
        privileged         = true
        cap_add            = ["SYS_ADMIN"]
        cap_drop           = ["NET_RAW"]
        network_mode       = "host"
        force_pull         = true
        image_pull_timeout = "1m30s"
        volumes            = ["local/cfg:/etc/app:ro", "/srv:/srv"]
        devices            = [{ host_path = "/dev/fuse" }]
        labels { team = "storage" }
        ulimit { nofile = "1024:2048" }
        mount {
          type   = "bind"
          source = "local/x"
          target = "/x"
          bind_options { propagation = "rshared" }
        }`);
    const c = dockerTaskConfig("config", job.TaskGroups[0]!.Tasks[0]!.Config);
    assert.deepEqual(c, {
      image: "app:1",
      command: "/bin/app",
      args: ["-v"],
      entrypoint: ["/init"],
      workDir: "/w",
      privileged: true,
      capAdd: ["SYS_ADMIN"],
      capDrop: ["NET_RAW"],
      devices: [{ hostPath: "/dev/fuse", containerPath: "/dev/fuse", cgroupPermissions: "rwm" }],
      mounts: [{ source: "local/x", target: "/x", readonly: false, propagation: "rshared" }],
      volumes: ["local/cfg:/etc/app:ro", "/srv:/srv"],
      networkMode: "host",
      labels: { team: "storage" },
      ulimits: { nofile: { soft: 1024, hard: 2048 } },
      forcePull: true,
      imagePullTimeoutMs: 90_000,
    });
  });

  it("defaults: only image is required; a 5m pull timeout; bind propagation rprivate", () => {
    const c = dockerTaskConfig("config", { image: "a", mount: { type: "bind", source: "s", target: "/t" } });
    assert.equal(c.imagePullTimeoutMs, DEFAULT_IMAGE_PULL_TIMEOUT_MS);
    assert.equal(c.mounts[0]!.propagation, "rprivate");
    assert.equal(c.privileged, false);
    assert.throws(() => dockerTaskConfig("config", {}), /config\.image: is required/);
  });

  const refusals: [string, RegExp][] = [
    ['image = "a"\nfoo = 1', /Config\.foo: is not a docker driver option/],
    ['image = "a"\nports = ["http"]', /Config\.ports: is not supported by berth's docker driver/],
    ['image = "a"\nauth { username = "u" }', /Config\.auth: is not supported by berth's docker driver/],
    ['image = "a"\nprivileged = "yes"', /Config\.privileged: must be a boolean/],
    ['image = "a"\nvolumes = ["nocolon"]', /Config\.volumes\[0\]: must be "host_path:\/container\/path/],
    ['image = "a"\nvolumes = ["a:/b:rx"]', /mode must be "ro" or "rw"/],
    ['image = "a"\nulimit { nofile = "many" }', /Config\.ulimit\.nofile: must be "soft" or "soft:hard"/],
    ['image = "a"\nimage_pull_timeout = "soon"', /Config\.image_pull_timeout: must be a duration/],
    ['image = "a"\nmount {\n type = "tmpfs"\n target = "/t"\n}', /only "bind" mounts are supported/],
    [
      'image = "a"\nmount {\n type = "bind"\n source = "s"\n target = "/t"\n bind_options { propagation = "sideways" }\n}',
      /propagation: must be one of rprivate/,
    ],
    ['image = "a"\ndevices = [{ host_path = "dev/x" }]', /host_path: must be an absolute path/],
  ];
  for (const [config, want] of refusals) {
    it(`job validation refuses: ${config.split("\n").slice(1).join(" ")}`, async () => {
      const job = await jobWith(config);
      assert.throws(() => validateJob(job), want);
    });
  }

  it("other drivers' config is checked against their own schema, not docker's", async () => {
    const job = await jobWith('image = "a"\nfoo = 1');
    const t = job.TaskGroups[0]!.Tasks[0]! as { Driver?: string; Config?: Record<string, unknown> };
    t.Driver = "podman";
    assert.doesNotThrow(() => validateJob(job), "a driver berth lacks: the scheduler's to refuse");
    t.Driver = "raw_exec";
    assert.throws(() => validateJob(job), /Config\.(image|foo): is not an option of the raw_exec driver/);
    t.Config = { command: "/bin/true", args: ["-x"], oom_score_adj: 5 };
    assert.throws(
      () => validateJob(job),
      /Config\.oom_score_adj: is not supported by berth's raw_exec driver/,
    );
    t.Driver = "exec";
    t.Config = { command: "/bin/true", pid_mode: "host" };
    assert.throws(() => validateJob(job), /Config\.pid_mode: is not supported by berth's exec driver/);
    // A number is its text, as Nomad's exec spec converts it (exec_config_values.test.ts).
    t.Config = { command: ["/bin/true"] };
    assert.throws(() => validateJob(job), /Config\.command: must be a string/);
    t.Config = { command: "/bin/true", args: ["-x", [1]] };
    assert.throws(() => validateJob(job), /Config\.args\[1\]: must be a string/);
    t.Config = { command: "/bin/true", args: ["-x"] };
    assert.doesNotThrow(() => validateJob(job));
  });
});
