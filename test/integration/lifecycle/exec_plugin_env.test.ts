/**
 * A CSI plugin under exec that needs what Nomad gives plugin tasks: /sys (it runs lsblk before it
 * serves), the host's /dev, and its socket only through `--endpoint=${CSI_ENDPOINT}` in its args
 * (CSI_ENDPOINT is removed from its environment, so only the interpolated argument can tell it).
 * Its storage is a host volume at a destination built from node meta and read back through
 * `${env["STATE"]}`. A volume is created, staged, published, written, released and deleted
 * through it with a real `berth agent -dev`; nothing is left mounted or running.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import {
  AgentProcess,
  eventually,
  findFiles,
  freePort,
  getJson,
  killProcessGroupsUnder,
  logTail,
  runCli,
} from "../../helpers/agent_process.js";
import { volumeHcl } from "./hostpath_cluster.js";

let dir: string;
let storage: string;
let agent: AgentProcess;
let addr: string;
let logFile: string;
let passed = false;

const PLUGIN = `job "plugin" {
  group "plugin" {
    volume "storage" {
      type   = "host"
      source = "plugin-data"
    }
    task "plugin" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args = [
          "-c",
          "lsblk -d >/dev/null && test -e /dev/loop-control && exec env -u CSI_ENDPOINT berth csi-hostpath \\"$@\\"",
          "plugin",
          "--endpoint=\${CSI_ENDPOINT}",
          "--node-id=\${node.unique.id}",
          "--state-dir=\${env["STATE"]}",
        ]
      }
      env {
        STATE = "/srv/\${meta.purpose}"
      }
      volume_mount {
        volume      = "storage"
        destination = "/srv/\${meta.purpose}"
      }
      csi_plugin {
        id        = "hostpath"
        type      = "monolith"
        mount_dir = "/csi"
      }
    }
  }
}
`;

const WRITER = `job "writer" {
  type = "batch"
  group "g" {
    volume "data" {
      type            = "csi"
      source          = "v1"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo hello > /data/hello.txt"]
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
    }
  }
}
`;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-execplugin-"));
  storage = path.join(dir, "storage");
  fs.mkdirSync(storage);
  const port = await freePort();
  addr = `http://127.0.0.1:${port}`;
  logFile = path.join(dir, "agent.log");
  agent = new AgentProcess(
    [
      "-dev",
      "-data-dir",
      path.join(dir, "data"),
      "-http-addr",
      `127.0.0.1:${port}`,
      `-host-volume=plugin-data:${storage}`,
      "-meta=purpose=hostpath",
    ],
    logFile,
  );
  await eventually("the dev node to be ready", async () => {
    const nodes = await getJson<{ Status: string }[]>(addr, "/v1/nodes");
    return nodes.some((n) => n.Status === "ready") ? true : undefined;
  });
});

after(async () => {
  const code = await agent?.stop(90_000);
  const killed = killProcessGroupsUnder(dir);
  if (!passed || code !== 0) process.stderr.write(`agent log:\n${logTail(logFile, 100)}\n`);
  const left = await mountsUnder(dir);
  fs.rmSync(dir, { recursive: true, force: true });
  assert.equal(code, 0, "the agent stopped cleanly");
  assert.deepEqual(left, [], "nothing is left mounted");
  assert.deepEqual(killed, [], "no process outlived the agent");
});

async function cli(args: string[]): Promise<string> {
  const r = await runCli(args, { BERTH_ADDR: addr });
  assert.equal(r.code, 0, `berth ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

function spec(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

test(
  "an exec plugin needing /sys, host /dev and --endpoint=${CSI_ENDPOINT} serves a volume's whole life",
  { timeout: 240_000 },
  async () => {
    await cli(["job", "run", spec("plugin.hcl", PLUGIN)]);
    await eventually(
      "plugin hostpath to be healthy",
      async () => {
        const p = await getJson<{ NodesHealthy: number; ControllersHealthy: number }>(
          addr,
          "/v1/plugin/csi/hostpath",
        );
        return p.NodesHealthy >= 1 && p.ControllersHealthy >= 1 ? p : undefined;
      },
      90_000,
    );
    await cli(["volume", "create", spec("volume.hcl", volumeHcl("v1"))]);
    assert.ok(
      fs.existsSync(path.join(storage, "volumes")),
      "the plugin keeps its volumes in the host volume",
    );

    await cli(["job", "run", spec("writer.hcl", WRITER)]);
    await eventually(
      "the writer to complete",
      async () => {
        const allocs = await getJson<{ ClientStatus: string }[]>(addr, "/v1/job/writer/allocations");
        if (allocs.some((a) => a.ClientStatus === "failed")) throw new Error("writer failed");
        return allocs.length === 1 && allocs[0]!.ClientStatus === "complete" ? true : undefined;
      },
      120_000,
    );
    const hellos = findFiles(storage, "hello.txt");
    assert.equal(hellos.length, 1, "the bytes are in the plugin's storage");
    assert.equal(fs.readFileSync(hellos[0]!, "utf8"), "hello\n");

    await cli(["job", "stop", "-purge", "writer"]);
    await eventually(
      "the claim to be released",
      async () => {
        const v = await getJson<{
          WriteAllocs: object | null;
          ReadAllocs: object | null;
          PastClaims: object | null;
        }>(addr, "/v1/volume/csi/v1?claims=true");
        const n = [v.WriteAllocs, v.ReadAllocs, v.PastClaims].reduce(
          (s, c) => s + Object.keys(c ?? {}).length,
          0,
        );
        return n === 0 ? true : undefined;
      },
      60_000,
    );
    // Only the plugin's own directory (bound onto itself, shared) stays while the plugin runs.
    assert.deepEqual(
      (await mountsUnder(dir)).filter((m) => !/\/client\/csi\/monolith\/hostpath$/.test(m)),
      [],
      "nothing of the volume stays staged or published",
    );
    await cli(["volume", "delete", "v1"]);
    assert.equal(fs.existsSync(path.dirname(hellos[0]!)), false, "DeleteVolume removed the storage");
    passed = true;
  },
);
