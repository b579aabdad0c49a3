/**
 * berth's own volume specs in every Nomad idiom (test/fixtures/volumes/), each decoded and compared
 * whole with the CSIVolumeSpec Nomad's CLI would send; and `volume init`'s examples round-trip.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { parseVolumeSpec } from "../../../src/api/index.js";
import { volumeInit } from "../../../src/cli/commands/volume_init.js";
import { volumeRegister } from "../../../src/cli/commands/volume_register.js";
import type { CommandIO } from "../../../src/cli/io.js";
import { startFakeApi } from "../../fakes/api.js";
import { captureIO } from "../../fakes/command_io.js";

const dir = new URL("../../../../test/fixtures/volumes/", import.meta.url);

describe("volume spec fixtures", async () => {
  const specs = (await readdir(dir)).filter((f) => !f.endsWith(".expected.json"));
  assert.ok(specs.length >= 3);
  for (const f of specs) {
    it(`${f} decodes as Nomad decodes it`, async () => {
      const warnings: string[] = [];
      const got = await parseVolumeSpec(f, await readFile(new URL(f, dir), "utf8"), {
        warn: (m) => warnings.push(m),
      });
      const want = JSON.parse(
        await readFile(new URL(f.replace(/\.(hcl|json)$/, ".expected.json"), dir), "utf8"),
      ) as unknown;
      assert.deepEqual(got, want);
      // Only the list-of-required form loses a block (as in Nomad), and berth says so.
      assert.equal(warnings.length, f === "lists.json" ? 1 : 0, warnings.join("\n"));
    });
  }
});

describe("mount_options as hcl v1 decodes them", () => {
  it("keeps numbers and bools as written, refuses a bare string for mount_flags with its line", async () => {
    const spec = 'type = "csi"\nmount_options { fs_type = 0x10, mount_flags = ["ro", 1.50, true] }\n';
    assert.deepEqual(await parseVolumeSpec("v.hcl", spec), {
      MountOptions: { FSType: "0x10", MountFlags: ["ro", "1.50", "true"] },
    });
    await assert.rejects(
      parseVolumeSpec("v.hcl", 'type = "csi"\nmount_options {\n mount_flags = "ro"\n}\n'),
      /^SpecError: v\.hcl:3:2: mount_options: mount_flags must be a list of strings, got string "ro"$/,
    );
  });
});

describe("berth volume init", () => {
  let tmp = "";
  after(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const io = () => {
    const o = { out: [] as string[], err: [] as string[] };
    const cio = { stdout: (l: string) => o.out.push(l), stderr: (l: string) => o.err.push(l) };
    return { o, cio: cio as unknown as CommandIO };
  };

  it("writes HCL and JSON examples that decode to the same volume, and never overwrites", async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), "berth-volinit-"));
    const hcl = path.join(tmp, "volume.hcl");
    const json = path.join(tmp, "volume.json");
    const a = io();
    assert.equal(await volumeInit.run(volumeInit.parse([hcl]), a.cio), 0);
    assert.deepEqual(a.o.out, [`Example volume specification written to ${hcl}`]);
    assert.equal(await volumeInit.run(volumeInit.parse(["-json", json]), io().cio), 0);
    const fromHcl = await parseVolumeSpec(hcl, await readFile(hcl, "utf8"), { warn: assert.fail });
    const fromJson = await parseVolumeSpec(json, await readFile(json, "utf8"), { warn: assert.fail });
    assert.deepEqual(fromJson, fromHcl);
    assert.equal(fromHcl.RequestedTopologies?.Required?.length, 2);
    assert.equal(fromHcl.RequestedCapabilities?.length, 2);

    const before = await readFile(hcl, "utf8");
    const b = io();
    assert.equal(await volumeInit.run(volumeInit.parse([hcl]), b.cio), 1);
    assert.deepEqual(b.o.err, [`Volume specification ${JSON.stringify(hcl)} already exists`]);
    assert.equal(await readFile(hcl, "utf8"), before);
    assert.deepEqual(volumeInit.parse([]).file, "volume.hcl");
    assert.deepEqual(volumeInit.parse(["-json"]).file, "volume.json");
    assert.throws(() => volumeInit.parse(["-type", "host"]), /-type "host"/);
  });
});

describe("berth volume register with a Nomad spec", () => {
  it("sends no ExternalID when the spec has none, and names ignored keys on stderr", async () => {
    const api = await startFakeApi({ "PUT /v1/volume/csi/legacy": { text: "" } });
    try {
      const spec = `${await readFile(new URL("register.hcl", dir), "utf8")}\nnode_pool = "all"\n`;
      const o = captureIO(api.address, { "v.hcl": spec });
      assert.equal(await volumeRegister.run(volumeRegister.parse(["v.hcl"]), o), 0);
      assert.deepEqual(o.err, [
        'Warning: v.hcl:25:1: ignoring key "node_pool": Nomad\'s volume spec has no such key',
      ]);
      const sent = JSON.parse(api.requests.at(-1)!.body) as { Volumes: Record<string, unknown>[] };
      assert.equal(sent.Volumes[0]!.ID, "legacy");
      assert.equal("ExternalID" in sent.Volumes[0]!, false);
    } finally {
      await api.close();
    }
  });
});
