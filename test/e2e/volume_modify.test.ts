/**
 * Issue 33 items 6 and 7 end to end, through the CLI against one real `berth agent -dev` running
 * two csi-hostpath plugins under raw_exec (so the test can look at their storage and call logs):
 *
 * - `hp-feat`: --expansion=offline --modify-volume --volume-mount-group;
 * - `hp-plain`: the defaults (ONLINE expansion, no MODIFY_VOLUME, no VOLUME_MOUNT_GROUP).
 *
 * Mutable parameters reach the plugin on create and through ControllerModifyVolume on a re-apply
 * (create and register), an immutable change is a 400 naming the field, a plugin without
 * MODIFY_VOLUME refuses; an offline plugin's volume in use is not expanded (409, no plugin call)
 * until its job is stopped, and `volume register` with a larger capacity expands it; a task running
 * as `nobody` writes into a volume whose root only a group may write, once by the plugin's
 * VOLUME_MOUNT_GROUP and once by berth's own walk, whose on_root_mismatch policy leaves a file
 * changed afterwards alone on the next start.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { mountsUnder } from "../../src/internal/mountinfo.js";
import { readCallLog } from "../../src/csi/hostpath/call_log.js";
import {
  AgentProcess,
  BERTH_BIN,
  eventually,
  freePort,
  getJson,
  killProcessesUnder,
  logTail,
  pluginHealthy,
  runCli,
} from "../helpers/agent_process.js";

const MiB = 1 << 20;
const NOGROUP = 65534;
let dir: string;
let agent: AgentProcess;
let addr: string;
let logFile: string;
let passed = 0;

const storage = (plugin: string) => path.join(dir, `storage-${plugin}`);
const callLog = (plugin: string) => path.join(dir, `calls-${plugin}.jsonl`);

interface VolumeView {
  ID: string;
  ExternalID: string;
  Capacity: number;
  MutableParameters?: Record<string, string>;
  ReadAllocs: Record<string, unknown> | null;
  WriteAllocs: Record<string, unknown> | null;
  PastClaims: Record<string, unknown>;
}

function pluginGroup(id: string, flags: string[]): string {
  const args = [
    BERTH_BIN,
    "csi-hostpath",
    "--node-id=${node.unique.id}",
    `--state-dir=${storage(id)}`,
    `--call-log=${callLog(id)}`,
    ...flags,
  ];
  return `  group ${JSON.stringify(id)} {
    task "plugin" {
      driver = "raw_exec"
      config {
        command = ${JSON.stringify(process.execPath)}
        args    = ${JSON.stringify(args)}
      }
      csi_plugin {
        id        = ${JSON.stringify(id)}
        type      = "monolith"
        mount_dir = "/csi"
      }
    }
  }`;
}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-vmod-"));
  logFile = path.join(dir, "agent.log");
  const port = await freePort();
  addr = `http://127.0.0.1:${port}`;
  agent = new AgentProcess(
    ["-dev", "-data-dir", path.join(dir, "data"), "-http-addr", `127.0.0.1:${port}`],
    logFile,
  );
  await eventually("the dev node to be ready", async () => {
    const nodes = await getJson<{ Status: string }[]>(addr, "/v1/nodes");
    return nodes.some((n) => n.Status === "ready") ? true : undefined;
  });
  const job = `job "plugins" {\n${pluginGroup("hp-feat", ["--expansion=offline", "--modify-volume", "--volume-mount-group"])}\n${pluginGroup("hp-plain", [])}\n}\n`;
  await cli(["job", "run", writeFile("plugins.hcl", job)]);
  await pluginHealthy(addr, "hp-feat");
  await pluginHealthy(addr, "hp-plain");
});

after(async () => {
  await runCli(["job", "stop", "-purge", "users"], { BERTH_ADDR: addr }).catch(() => undefined);
  agent?.kill();
  killProcessesUnder(dir);
  if (passed < 3) process.stderr.write(`--- agent log (tail) ---\n${logTail(logFile)}\n`);
  for (const m of (await mountsUnder(dir)).reverse()) {
    try {
      execFileSync("umount", ["-l", m]);
    } catch {
      /* already gone */
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

async function cli(args: string[]): Promise<string> {
  const r = await runCli(args, { BERTH_ADDR: addr });
  assert.equal(r.code, 0, `berth ${args.join(" ")}: ${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

async function cliFails(args: string[]): Promise<string> {
  const r = await runCli(args, { BERTH_ADDR: addr });
  assert.equal(r.code, 1, `berth ${args.join(" ")} must fail: ${r.stdout}`);
  return r.stderr;
}

let files = 0;
function writeFile(name: string, text: string): string {
  const file = path.join(dir, `${++files}-${name}`);
  fs.writeFileSync(file, text);
  return file;
}

function volumeHcl(id: string, plugin: string, extra = "", min = "1MiB"): string {
  return writeFile(
    `${id}.hcl`,
    `id = "${id}"\nname = "${id}"\ntype = "csi"\nplugin_id = "${plugin}"\ncapacity_min = "${min}"\n${extra}\ncapability {\n  access_mode = "single-node-writer"\n  attachment_mode = "file-system"\n}\n`,
  );
}

/** A service job whose task runs as nobody with each of `volumes` mounted at /<volume ID>. */
function usersJob(volumes: { id: string; mountOptions?: string }[], script: string): string {
  const blocks = volumes.map(
    (v) => `    volume "${v.id}" {
      type            = "csi"
      source          = "${v.id}"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
      ${v.mountOptions ?? ""}
    }`,
  );
  const mounts = volumes.map(
    (v) => `      volume_mount {
        volume      = "${v.id}"
        destination = "/${v.id}"
      }`,
  );
  return writeFile(
    "users.hcl",
    `job "users" {
  group "g" {
${blocks.join("\n")}
    task "t" {
      driver = "exec"
      user   = "nobody"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(script)}]
      }
${mounts.join("\n")}
    }
  }
}
`,
  );
}

const volume = (id: string) => getJson<VolumeView>(addr, `/v1/volume/csi/${id}?claims=true`);
const okCalls = (plugin: string, ext: string, method: string) =>
  readCallLog(callLog(plugin)).filter((c) => c.volume_id === ext && c.method === method && c.code === "OK");
const hostpathMeta = (plugin: string, ext: string) =>
  JSON.parse(fs.readFileSync(path.join(storage(plugin), "meta", `${ext}.json`), "utf8")) as {
    capacityBytes: number;
    mutableParameters?: Record<string, string>;
  };
const claimCount = (v: VolumeView) =>
  Object.keys(v.ReadAllocs ?? {}).length +
  Object.keys(v.WriteAllocs ?? {}).length +
  Object.keys(v.PastClaims).length;

async function usersRunning(): Promise<void> {
  await eventually("the users job to run", async () => {
    const allocs = await getJson<{ ClientStatus: string }[]>(addr, "/v1/job/users/allocations");
    if (allocs.some((a) => a.ClientStatus === "failed")) throw new Error("users failed");
    return allocs.some((a) => a.ClientStatus === "running") ? true : undefined;
  });
}

async function stopUsers(volumes: string[]): Promise<void> {
  await cli(["job", "stop", "-purge", "users"]);
  for (const id of volumes) {
    await eventually(`${id}'s claims to be released`, async () =>
      claimCount(await volume(id)) === 0 ? true : undefined,
    );
  }
}

test(
  "mutable parameters: on create, modified on re-apply (create, register); immutable changes refused",
  { timeout: 120_000 },
  async () => {
    await cli(["volume", "create", volumeHcl("m1", "hp-feat", 'mutable_parameters {\n  iops = "100"\n}')]);
    const m1 = await volume("m1");
    assert.deepEqual(m1.MutableParameters, { iops: "100" });
    assert.deepEqual(
      hostpathMeta("hp-feat", m1.ExternalID).mutableParameters,
      { iops: "100" },
      "sent with CreateVolume",
    );

    await cli(["volume", "create", volumeHcl("m1", "hp-feat", 'mutable_parameters {\n  iops = "100"\n}')]);
    assert.equal(okCalls("hp-feat", m1.ExternalID, "ControllerModifyVolume").length, 0, "unchanged: no call");
    await cli(["volume", "create", volumeHcl("m1", "hp-feat", 'mutable_parameters {\n  iops = "500"\n}')]);
    assert.equal(okCalls("hp-feat", m1.ExternalID, "ControllerModifyVolume").length, 1);
    assert.deepEqual(hostpathMeta("hp-feat", m1.ExternalID).mutableParameters, { iops: "500" });
    assert.deepEqual((await volume("m1")).MutableParameters, { iops: "500" });

    const reg = `external_id = "${m1.ExternalID}"\nmutable_parameters {\n  iops = "900"\n}`;
    await cli(["volume", "register", volumeHcl("m1", "hp-feat", reg)]);
    assert.deepEqual(
      hostpathMeta("hp-feat", m1.ExternalID).mutableParameters,
      { iops: "900" },
      "register modifies",
    );
    assert.deepEqual((await volume("m1")).MutableParameters, { iops: "900" });

    assert.match(
      await cliFails(["volume", "create", volumeHcl("m1", "hp-feat", 'parameters {\n  tier = "gold"\n}')]),
      /400.*Volumes\[0\]\.Parameters.*cannot be changed.*mutable_parameters/,
    );

    await cli(["volume", "create", volumeHcl("m2", "hp-plain")]);
    assert.match(
      await cliFails([
        "volume",
        "create",
        volumeHcl("m2", "hp-plain", 'mutable_parameters {\n  iops = "1"\n}'),
      ]),
      /400.*MutableParameters.*does not advertise MODIFY_VOLUME/,
    );
    assert.equal((await volume("m2")).MutableParameters, undefined, "nothing recorded");
    passed++;
  },
);

test(
  "offline expansion is refused while the volume is in use; register expands like create",
  { timeout: 120_000 },
  async () => {
    await cli(["volume", "create", volumeHcl("e1", "hp-feat")]);
    const e1 = await volume("e1");
    await cli(["job", "run", usersJob([{ id: "e1" }], "exec sleep 600")]);
    await usersRunning();
    const refused = await cliFails(["volume", "create", volumeHcl("e1", "hp-feat", "", "8MiB")]);
    assert.match(refused, /409.*in use by allocation .*only offline.*stop the jobs using it/);
    assert.equal(okCalls("hp-feat", e1.ExternalID, "ControllerExpandVolume").length, 0, "no plugin call");
    assert.equal((await volume("e1")).Capacity, e1.Capacity);

    await stopUsers(["e1"]);
    await cli(["volume", "create", volumeHcl("e1", "hp-feat", "", "8MiB")]);
    assert.equal((await volume("e1")).Capacity, 8 * MiB);

    await cli([
      "volume",
      "register",
      volumeHcl("e1", "hp-feat", `external_id = "${e1.ExternalID}"`, "16MiB"),
    ]);
    assert.equal((await volume("e1")).Capacity, 16 * MiB, "register of a larger capacity expanded");
    assert.equal(hostpathMeta("hp-feat", e1.ExternalID).capacityBytes, 16 * MiB);
    assert.equal(okCalls("hp-feat", e1.ExternalID, "ControllerExpandVolume").length, 2);
    passed++;
  },
);

test(
  "a task running as nobody writes a group-only volume: plugin VOLUME_MOUNT_GROUP, then berth's walk",
  { timeout: 180_000 },
  async () => {
    await cli(["volume", "create", volumeHcl("g1", "hp-feat")]);
    await cli(["volume", "create", volumeHcl("g2", "hp-plain")]);
    const g1 = await volume("g1");
    const g2 = await volume("g2");
    const root1 = path.join(storage("hp-feat"), "volumes", g1.ExternalID);
    const root2 = path.join(storage("hp-plain"), "volumes", g2.ExternalID);
    // Only root and the group may write: nobody can only through the mount group.
    for (const r of [root1, root2]) {
      fs.chownSync(r, 0, 0);
      fs.chmodSync(r, 0o770);
    }
    const group = `mount_options {\n        mount_group = "${NOGROUP}"\n        mount_group_policy = "on_root_mismatch"\n      }`;
    const vols = [
      { id: "g1", mountOptions: group },
      { id: "g2", mountOptions: group },
    ];
    const script = "echo one > /g1/by-task && echo two > /g2/by-task && exec sleep 600";
    await cli(["job", "run", usersJob(vols, script)]);
    await usersRunning();
    for (const r of [root1, root2]) {
      const file = path.join(r, "by-task");
      await eventually(`${file} to be written`, async () => (fs.existsSync(file) ? true : undefined));
      assert.equal(fs.statSync(file).uid, NOGROUP, "written by nobody");
      assert.equal(fs.statSync(file).gid, NOGROUP, "inherits the group (setgid root)");
      assert.equal(fs.statSync(r).gid, NOGROUP);
      assert.equal(fs.statSync(r).mode & 0o2070, 0o2070);
    }
    assert.ok(okCalls("hp-feat", g1.ExternalID, "NodePublishVolume").length > 0, "the plugin applied it");
    assert.ok(okCalls("hp-plain", g2.ExternalID, "NodePublishVolume").length > 0, "never sent to hp-plain");

    // on_root_mismatch: the root is right now, so the next start walks nothing.
    await stopUsers(["g1", "g2"]);
    const changed = path.join(root2, "by-task");
    fs.chownSync(changed, NOGROUP, 4343);
    await cli(["job", "run", usersJob(vols, "exec sleep 600")]);
    await usersRunning();
    assert.equal(fs.statSync(changed).gid, 4343, "left alone by the second start");
    await stopUsers(["g1", "g2"]);
    passed++;
  },
);
