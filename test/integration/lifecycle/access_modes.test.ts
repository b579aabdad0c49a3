/**
 * CSI 1.5's two single-node access modes and the mount options merge, end to end through one real
 * agent, csi-hostpath (a raw_exec plugin task, with --call-log) and exec tasks:
 * - single-node-multi-writer: two writing allocs of one group run at once on the node, each
 *   writing into the volume; the plugin is sent SINGLE_NODE_MULTI_WRITER (it advertises the
 *   capability) and the merged mount options (volume's fs_type, the job's mount_flags);
 * - single-node-single-writer: of two writing allocs one runs, the other is not placed (its
 *   evaluation blocks);
 * - a plugin generation without --single-node-multi-writer is sent SINGLE_NODE_WRITER for the same
 *   volume (the spec's legacy mapping).
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { eventually } from "../../helpers/agent_process.js";
import { readCallLog } from "../../../src/csi/hostpath/call_log.js";
import { claimCount, type AllocView, type VolumeView } from "../restart/restart_fixtures.js";
import { UpdateRig } from "./plugin_update_fixtures.js";

const SLEEP = 86_417;

function volumeSpec(id: string, mode: string, mountOptions = ""): string {
  return `id = "${id}"\nname = "${id}"\ntype = "csi"\nplugin_id = "hostpath"\ncapability {\n  access_mode = "${mode}"\n  attachment_mode = "file-system"\n}\n${mountOptions}`;
}

function writerJob(id: string, volume: string, mode: string, count: number, mountOptions = ""): string {
  return `job "${id}" {
  group "g" {
    count = ${count}
    volume "data" {
      type            = "csi"
      source          = "${volume}"
      access_mode     = "${mode}"
      attachment_mode = "file-system"
${mountOptions}
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo $NOMAD_ALLOC_ID > /data/$NOMAD_ALLOC_ID && exec sleep ${SLEEP}"]
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
    }
  }
}
`;
}

test("single-node-multi-writer and single-node-single-writer through real processes; mount options merged", async () => {
  const rig = new UpdateRig("access-modes", "raw_exec");
  const callLog = path.join(rig.dir, "calls.jsonl");
  let passed = false;
  try {
    await rig.start();
    await rig.runPlugin(0, { args: ["--single-node-multi-writer", `--call-log=${callLog}`] });
    const spec = (id: string, mode: string, mo = "") => rig.write(`${id}.vol.hcl`, volumeSpec(id, mode, mo));
    await rig.cli.run([
      "volume",
      "create",
      spec(
        "multi",
        "single-node-multi-writer",
        'mount_options {\n  fs_type = "ext4"\n  mount_flags = ["noatime"]\n}\n',
      ),
    ]);
    await rig.cli.run(["volume", "create", spec("single", "single-node-single-writer")]);
    const multi = (await rig.cli.get<VolumeView>("/v1/volume/csi/multi"))!;
    const single = (await rig.cli.get<VolumeView>("/v1/volume/csi/single"))!;

    const jobMo = '      mount_options {\n        mount_flags = ["nodev", "nosuid"]\n      }';
    await rig.cli.run([
      "job",
      "run",
      rig.write("m.hcl", writerJob("m", "multi", "single-node-multi-writer", 2, jobMo)),
    ]);
    await rig.cli.run([
      "job",
      "run",
      rig.write("s.hcl", writerJob("s", "single", "single-node-single-writer", 2)),
    ]);

    // Two writers of the multi-writer volume, on the one node, both writing into it.
    const running = await eventually(
      "both multi-writer allocs to run and write",
      async () => {
        const allocs = (await rig.cli.get<AllocView[]>("/v1/job/m/allocations")) ?? [];
        const up = allocs.filter((a) => a.ClientStatus === "running");
        const dir = path.join(rig.storage, "volumes", multi.ExternalID);
        return up.length === 2 && up.every((a) => fs.existsSync(path.join(dir, a.ID))) ? up : undefined;
      },
      120_000,
    );
    assert.equal(running.length, 2);
    const mv = (await rig.cli.get<VolumeView>("/v1/volume/csi/multi?claims=true"))!;
    assert.equal(Object.keys(mv.WriteClaims).length, 2, "two write claims");

    // One writer of the single-writer volume; the second alloc is not placed.
    await rig.allocOf("s", "running", 120_000);
    await eventually("the second single-writer alloc's evaluation to block", async () => {
      const evals = (await rig.cli.get<{ Status: string }[]>("/v1/job/s/evaluations")) ?? [];
      return evals.some((e) => e.Status === "blocked") ? true : undefined;
    });
    assert.equal((await rig.cli.get<AllocView[]>("/v1/job/s/allocations"))?.length, 1, "one alloc placed");

    const calls = readCallLog(callLog);
    const publishes = (ext: string) =>
      calls.filter((c) => c.volume_id === ext && c.method === "NodePublishVolume" && c.code === "OK");
    assert.equal(publishes(multi.ExternalID).length, 2);
    for (const c of publishes(multi.ExternalID)) {
      assert.equal(c.access_mode, "SINGLE_NODE_MULTI_WRITER");
      assert.equal(c.fs_type, "ext4", "the volume's fs_type (the job sets none)");
      assert.equal(c.mount_flags_count, 2, "the job's two mount_flags replace the volume's one");
    }
    assert.deepEqual(
      publishes(single.ExternalID).map((c) => c.access_mode),
      ["SINGLE_NODE_SINGLE_WRITER"],
    );

    // A plugin generation that does not advertise SINGLE_NODE_MULTI_WRITER: SINGLE_NODE_WRITER.
    await rig.cli.run(["job", "stop", "m"]);
    await rig.cli.run(["job", "stop", "s"]);
    for (const v of ["multi", "single"]) {
      await eventually(
        `volume ${v}'s claims to be released`,
        async () => {
          const got = await rig.cli.get<VolumeView>(`/v1/volume/csi/${v}?claims=true`);
          return got && claimCount(got) === 0 ? true : undefined;
        },
        90_000,
      );
    }
    const legacyLog = path.join(rig.dir, "calls-legacy.jsonl");
    await rig.runPlugin(1, { args: [`--call-log=${legacyLog}`] });
    await rig.cli.run([
      "job",
      "run",
      rig.write("l.hcl", writerJob("l", "multi", "single-node-multi-writer", 1)),
    ]);
    await rig.allocOf("l", "running", 120_000);
    const legacy = readCallLog(legacyLog).filter((c) => c.volume_id === multi.ExternalID && c.code === "OK");
    assert.deepEqual(
      legacy
        .filter((c) => c.method === "NodeStageVolume" || c.method === "NodePublishVolume")
        .map((c) => c.access_mode),
      ["SINGLE_NODE_WRITER", "SINGLE_NODE_WRITER"],
    );
    await rig.cli.run(["job", "stop", "l"]);
    await eventually(
      "the legacy claim to be released",
      async () => {
        const got = await rig.cli.get<VolumeView>("/v1/volume/csi/multi?claims=true");
        return got && claimCount(got) === 0 ? true : undefined;
      },
      90_000,
    );
    await rig.stopAll();
    passed = true;
  } finally {
    await rig.cleanUp(passed, SLEEP);
  }
});
