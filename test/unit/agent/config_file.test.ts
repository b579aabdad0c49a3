import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import {
  parseAgentConfig,
  readAgentConfigFiles,
  resolveHostVolumes,
} from "../../../src/agent/config_file.js";
import { hostVolumeFlag, parseAgentArgs } from "../../../src/agent/options.js";

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-agentcfg-")));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("agent config file", () => {
  it("reads host volumes and meta from Nomad's HCL client block", async () => {
    const cfg = await parseAgentConfig(
      "a.hcl",
      'client {\n  host_volume "data" {\n    path = "/srv/data"\n    read_only = true\n  }\n  host_volume "b" {\n    path = "/b"\n  }\n  meta {\n    rack = "r1"\n  }\n}\n',
    );
    // In the file's order, as Nomad keeps them.
    assert.deepEqual(cfg, {
      hostVolumes: [
        { name: "data", path: "/srv/data", readOnly: true },
        { name: "b", path: "/b", readOnly: false },
      ],
      meta: { rack: "r1" },
    });
  });

  it("reads the same from Nomad's JSON syntax", async () => {
    const cfg = await parseAgentConfig(
      "a.json",
      JSON.stringify({ client: { host_volume: { data: { path: "/srv/data" } }, meta: { k: "v" } } }),
    );
    assert.deepEqual(cfg, {
      hostVolumes: [{ name: "data", path: "/srv/data", readOnly: false }],
      meta: { k: "v" },
    });
  });

  it("refuses unsupported keys, a missing path and a bad name, naming them", async () => {
    await assert.rejects(parseAgentConfig("a.hcl", "bogus = 1\n"), /a\.hcl:1:1: unknown key "bogus"/);
    await assert.rejects(
      parseAgentConfig("a.hcl", 'client {\n  host_volume "x" {\n    pth = "/x"\n  }\n}\n'),
      /client host_volume "x": path is required/,
    );
    await assert.rejects(
      parseAgentConfig("a.hcl", 'client {\n  host_volume "x" {\n    path = "/x"\n    mode = "rw"\n  }\n}\n'),
      /host_volume "x": unsupported key "mode"/,
    );
    await assert.rejects(
      parseAgentConfig("a.hcl", 'client {\n  host_volume "a/b" {\n    path = "/x"\n  }\n}\n'),
      /host volume name "a\/b"/,
    );
    await assert.rejects(parseAgentConfig("a.hcl", "client {"), /-config: a\.hcl/);
  });

  it("a directory is read file by file in name order, later settings winning", async () => {
    const d = path.join(dir, "conf.d");
    fs.mkdirSync(d);
    fs.writeFileSync(path.join(d, "b.hcl"), 'client {\n  meta {\n    k = "b"\n  }\n}\n');
    fs.writeFileSync(path.join(d, "a.json"), '{"client": {"meta": {"k": "a", "only": "a"}}}');
    fs.writeFileSync(path.join(d, "ignored.txt"), "not a config");
    assert.deepEqual((await readAgentConfigFiles([d])).meta, { k: "b", only: "a" });
    await assert.rejects(readAgentConfigFiles([path.join(dir, "absent.hcl")]), /-config: cannot read/);
  });

  it("host volume paths: absolute must be an existing directory; relative is made in the data dir", async () => {
    const data = path.join(dir, "data");
    fs.mkdirSync(data);
    fs.writeFileSync(path.join(dir, "file"), "");
    const vols = await resolveHostVolumes(
      [
        { name: "abs", path: dir, readOnly: true },
        { name: "rel", path: "vols/rel", readOnly: false },
        { name: "abs", path: data, readOnly: false },
      ],
      data,
    );
    assert.deepEqual(vols, {
      abs: { Name: "abs", Path: data, ReadOnly: false },
      rel: { Name: "rel", Path: path.join(data, "vols/rel"), ReadOnly: false },
    });
    assert.ok(fs.statSync(path.join(data, "vols/rel")).isDirectory());
    await assert.rejects(
      resolveHostVolumes([{ name: "x", path: path.join(dir, "absent"), readOnly: false }], data),
      /host volume "x": path ".*absent" does not exist/,
    );
    await assert.rejects(
      resolveHostVolumes([{ name: "x", path: path.join(dir, "file"), readOnly: false }], data),
      /host volume "x": path ".*file" is not a directory/,
    );
    await assert.rejects(
      resolveHostVolumes([{ name: "x", path: "../escape", readOnly: false }], data),
      /must stay inside the data dir/,
    );
  });

  it("-host-volume, -meta and -config flags", () => {
    assert.deepEqual(hostVolumeFlag("data:/srv/d:ro"), { name: "data", path: "/srv/d", readOnly: true });
    assert.deepEqual(hostVolumeFlag("data:rel"), { name: "data", path: "rel", readOnly: false });
    assert.throws(() => hostVolumeFlag("data"), /-host-volume: "data" is not NAME:PATH\[:ro\]/);
    assert.throws(() => hostVolumeFlag("data:/x:rx"), /mode "rx"/);
    assert.throws(() => hostVolumeFlag("data:"), /empty PATH/);
    const o = parseAgentArgs([
      "-dev",
      "-host-volume=a:/a",
      "-host-volume",
      "b:/b:ro",
      "-meta=k=v=w",
      "-config=x.hcl",
      "-config",
      "y",
    ]);
    assert.deepEqual(
      o.hostVolumes.map((h) => h.name),
      ["a", "b"],
    );
    assert.deepEqual(o.meta, { k: "v=w" });
    assert.deepEqual(o.configFiles, ["x.hcl", "y"]);
    assert.throws(() => parseAgentArgs(["-dev", "-meta=nokey"]), /-meta: "nokey" is not KEY=VALUE/);
  });
});
