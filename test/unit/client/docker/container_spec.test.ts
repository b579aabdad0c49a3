/**
 * The container a docker task gets (drivers/docker/container_spec.ts), pure: task dirs and the
 * hooks' mounts bound with their propagation and read-only flags, relative host paths kept in the
 * task dir, absolute ones only with volumes enabled, privileged only where allowed and the
 * fallback's grants where Docker cannot give it, labels that find the container again, resources
 * as cgroup limits. Also the capability names of a bounding set and the endpoint parsing.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  containerName,
  containerSpec,
  LABEL_ALLOC_ID,
  LABEL_TASK_NAME,
  type SpecSettings,
} from "../../../../src/client/drivers/docker/container_spec.js";
import { endpointOptions } from "../../../../src/client/drivers/docker/endpoint.js";
import { capabilitiesOf, isPrivilegeRefusal } from "../../../../src/client/drivers/docker/privileged.js";
import type { TaskStartConfig } from "../../../../src/client/drivers/driver.js";
import { dockerTaskConfig } from "../../../../src/structs/docker_config.js";

const ALLOC = "8d3f6c2e-0000-4000-8000-000000000001";
const cfg: TaskStartConfig = {
  allocId: ALLOC,
  taskName: "web",
  taskDir: "/d/alloc/a/web",
  allocSharedDir: "/d/alloc/a/alloc",
  command: "",
  args: [],
  env: { NOMAD_TASK_DIR: "/local", A: "b" },
  mounts: [
    { hostPath: "/d/csi/per-alloc/v", taskPath: "/data", readOnly: true, propagation: "private" },
    { hostPath: "/d/csi/node/hp", taskPath: "/csi", readOnly: false, propagation: "bidirectional" },
  ],
  stdoutPath: "/d/alloc/a/web/logs/web.stdout.0",
  stderrPath: "/d/alloc/a/web/logs/web.stderr.0",
  resources: { cpuShares: 500, memoryMB: 256, memoryMaxMB: 512, cores: 0, reservedCores: [] },
  user: "nobody",
};
const settings: SpecSettings = {
  allowPrivileged: false,
  volumesEnabled: false,
  defaultNetworkMode: "none",
  privilegedFallback: null,
};

describe("docker container spec", () => {
  it("binds the task dirs and the hooks' mounts; labels, env, user, resources, network", () => {
    const s = containerSpec(cfg, dockerTaskConfig("c", { image: "app:1", args: ["-x"] }), settings);
    assert.equal(s.name, `web-${ALLOC}`);
    assert.equal(s.Image, "app:1");
    assert.deepEqual(s.Cmd, ["-x"], "args alone are the image entrypoint's arguments");
    assert.equal(s.User, "nobody");
    assert.deepEqual(s.Env, ["NOMAD_TASK_DIR=/local", "A=b"]);
    assert.equal(s.Labels![LABEL_ALLOC_ID], ALLOC);
    assert.equal(s.Labels![LABEL_TASK_NAME], "web");
    const mounts = s.HostConfig!.Mounts!.map((m) => [
      m.Source,
      m.Target,
      m.ReadOnly,
      m.BindOptions?.Propagation,
    ]);
    assert.deepEqual(mounts, [
      ["/d/alloc/a/alloc", "/alloc", false, "rprivate"],
      ["/d/alloc/a/web/local", "/local", false, "rprivate"],
      ["/d/alloc/a/web/secrets", "/secrets", false, "rprivate"],
      ["/d/csi/per-alloc/v", "/data", true, "rprivate"],
      ["/d/csi/node/hp", "/csi", false, "rshared"],
    ]);
    assert.equal(s.HostConfig!.NetworkMode, "none");
    assert.equal(s.HostConfig!.Memory, 512 * 1024 * 1024);
    assert.equal(s.HostConfig!.MemoryReservation, 256 * 1024 * 1024);
    assert.equal(s.HostConfig!.CpuShares, 500);
    assert.equal(s.HostConfig!.Privileged, undefined);
  });

  it("command then args; relative host paths in the task dir, never out of it", () => {
    const dc = dockerTaskConfig("c", {
      image: "a",
      command: "/bin/sh",
      args: ["-c", "x"],
      volumes: ["local/cfg:/etc/cfg:ro"],
      mount: { type: "bind", source: "local/m", target: "/m", readonly: true },
    });
    const s = containerSpec(cfg, dc, settings);
    assert.deepEqual(s.Cmd, ["/bin/sh", "-c", "x"]);
    assert.deepEqual(s.HostConfig!.Binds, ["/d/alloc/a/web/local/cfg:/etc/cfg:ro"]);
    assert.equal(s.HostConfig!.Mounts!.at(-1)!.Source, "/d/alloc/a/web/local/m");
    const escape = dockerTaskConfig("c", { image: "a", volumes: ["../../../etc:/e"] });
    assert.throws(() => containerSpec(cfg, escape, settings), /escapes the task directory/);
  });

  it("absolute host paths only where volumes are enabled", () => {
    const dc = dockerTaskConfig("c", { image: "a", volumes: ["/srv:/srv"] });
    assert.throws(() => containerSpec(cfg, dc, settings), /volumes are not enabled on this node/);
    const s = containerSpec(cfg, dc, { ...settings, volumesEnabled: true });
    assert.deepEqual(s.HostConfig!.Binds, ["/srv:/srv:rw"]);
  });

  it("privileged: refused unless allowed; Privileged, or the fallback's grants", () => {
    const dc = dockerTaskConfig("c", { image: "a", privileged: true, cap_add: ["X"] });
    assert.throws(() => containerSpec(cfg, dc, settings), /privileged mode is disabled/);
    const allowed = { ...settings, allowPrivileged: true };
    assert.equal(containerSpec(cfg, dc, allowed).HostConfig!.Privileged, true);
    const fb = containerSpec(cfg, dc, {
      ...allowed,
      privilegedFallback: { capAdd: ["SYS_ADMIN", "MKNOD"], devices: ["/dev/fuse", "/dev/loop0"] },
    }).HostConfig!;
    assert.equal(fb.Privileged, undefined);
    assert.deepEqual(fb.CapAdd, ["SYS_ADMIN", "MKNOD"]);
    assert.deepEqual(
      (fb.Devices as { PathOnHost: string }[]).map((d) => d.PathOnHost),
      ["/dev/fuse", "/dev/loop0"],
    );
    assert.deepEqual(fb.DeviceCgroupRules, ["a *:* rwm"]);
    const securityOpt = fb.SecurityOpt as string[];
    assert.ok(securityOpt.includes("seccomp=unconfined"));
    assert.ok(securityOpt.includes("apparmor=unconfined"));
    assert.deepEqual(fb.MaskedPaths, []);
  });

  it("names Docker accepts; ulimits", () => {
    assert.equal(containerName("a b/c", "id"), "a_b_c-id");
    const s = containerSpec(
      cfg,
      dockerTaskConfig("c", { image: "a", ulimit: { nofile: "10:20" } }),
      settings,
    );
    assert.deepEqual(s.HostConfig!.Ulimits, [{ Name: "nofile", Soft: 10, Hard: 20 }]);
  });
});

describe("privileged fallback and endpoint", () => {
  it("the bounding set's capabilities by name (bits past AUDIT_READ left out)", () => {
    // This sandbox's: everything up to 40 but CAP_SYS_RESOURCE (24).
    const caps = capabilitiesOf("000001fffeffffff");
    assert.equal(caps.length, 37);
    assert.ok(caps.includes("SYS_ADMIN"));
    assert.ok(!caps.includes("SYS_RESOURCE"));
    assert.ok(!caps.includes("BPF"));
    assert.ok(
      isPrivilegeRefusal(
        "OCI runtime create failed: runc create failed: unable to start container process: unable to apply caps: operation not permitted: unknown",
      ),
    );
    assert.ok(!isPrivilegeRefusal("no such image"));
  });

  it("unix:// and tcp:// endpoints; anything else refused", () => {
    assert.deepEqual(endpointOptions("unix:///var/run/docker.sock"), { socketPath: "/var/run/docker.sock" });
    assert.deepEqual(endpointOptions("tcp://127.0.0.1:2375"), {
      protocol: "http",
      host: "127.0.0.1",
      port: 2375,
    });
    assert.throws(() => endpointOptions("/var/run/docker.sock"), /want unix:\/\/\/path/);
  });
});
