/**
 * csi-hostpath's capacity per topology segment (src/csi/hostpath/capacity.ts): the flags, GetCapacity
 * as the segment's total minus its volumes (honouring accessible_topology and the capabilities),
 * and CreateVolume refusing a volume that does not fit its segment. Real volume files in a temp dir.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseHostpathFlags } from "../../../src/csi/hostpath/flags.js";
import { getSegmentCapacity } from "../../../src/csi/hostpath/capacity.js";
import { createVolume } from "../../../src/csi/hostpath/controller.js";
import { VolumeStore } from "../../../src/csi/hostpath/volumes.js";
import { AttachmentStore } from "../../../src/csi/hostpath/attachments.js";
import type { HostpathContext } from "../../../src/csi/hostpath/context.js";
import { nullLogger } from "../../../src/internal/log.js";

const mount = { mount: { fs_type: "", mount_flags: [] }, access_mode: { mode: "SINGLE_NODE_WRITER" } };

async function ctxWith(flags: string[]): Promise<{ ctx: HostpathContext; dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-hp-capacity-"));
  const config = parseHostpathFlags([
    "--endpoint=unix:///tmp/x.sock",
    "--mode=controller",
    `--state-dir=${dir}`,
    ...flags,
  ]);
  const volumes = new VolumeStore(dir);
  await volumes.init();
  return { ctx: { config, volumes, attachments: new AttachmentStore(dir), log: nullLogger }, dir };
}

const inZone = (zone: string) => ({ segments: { zone } });
const create = (ctx: HostpathContext, name: string, bytes: number, zone: string) =>
  createVolume(ctx, {
    name,
    capacity_range: { required_bytes: bytes, limit_bytes: 0 },
    volume_capabilities: [mount],
    parameters: {},
    secrets: {},
    volume_content_source: null,
    accessibility_requirements: { requisite: [inZone(zone)], preferred: [] },
  });

test("hostpath capacity flags: a total and totals per key=value; bad ones refused", () => {
  const base = ["--endpoint=unix:///tmp/x.sock", "--node-id=n1", "--state-dir=/tmp/s"];
  assert.deepEqual(parseHostpathFlags([...base, "--capacity=100", "--capacity-zone=b=300"]).capacity, {
    total: 100,
    segments: [{ key: "zone", value: "b", bytes: 300 }],
  });
  assert.deepEqual(parseHostpathFlags(base).capacity, { total: null, segments: [] });
  assert.throws(() => parseHostpathFlags([...base, "--capacity=-1"]), /bad number of bytes/);
  assert.throws(() => parseHostpathFlags([...base, "--capacity-zone=300"]), /--capacity-KEY=VALUE=BYTES/);
});

test("hostpath GetCapacity: each segment's total minus its volumes; capabilities it cannot serve answer 0", async () => {
  const { ctx, dir } = await ctxWith([`--capacity=1000`, `--capacity-zone=b=3000`]);
  try {
    const cap = (req: object) => getSegmentCapacity(ctx, req) as Promise<{ available_capacity: number }>;
    assert.equal((await cap({ accessible_topology: inZone("a") })).available_capacity, 1000);
    assert.equal((await cap({ accessible_topology: inZone("b") })).available_capacity, 3000);
    await create(ctx, "v1", 2000, "b");
    assert.equal((await cap({ accessible_topology: inZone("b") })).available_capacity, 1000);
    assert.equal(
      (await cap({ accessible_topology: inZone("a") })).available_capacity,
      1000,
      "zone a untouched",
    );
    assert.equal((await cap({})).available_capacity, 0, "the whole plugin: --capacity minus every volume");
    const block = { block: {}, access_mode: { mode: "SINGLE_NODE_WRITER" } };
    assert.equal(
      (await cap({ accessible_topology: inZone("b"), volume_capabilities: [block] })).available_capacity,
      0,
    );
    assert.equal(
      (await cap({ accessible_topology: inZone("b"), volume_capabilities: [mount] })).available_capacity,
      1000,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("hostpath CreateVolume refuses a volume larger than what is left of its segment", async () => {
  const { ctx, dir } = await ctxWith([`--capacity-zone=a=1000`]);
  try {
    await create(ctx, "v1", 600, "a");
    await assert.rejects(
      create(ctx, "v2", 600, "a"),
      /segment zone=a has 400 bytes left, the volume needs 600/,
    );
    await create(ctx, "v3", 400, "a");
    // A segment no flag covers: no limit (the free space of the state dir answers GetCapacity).
    await create(ctx, "v4", 600, "b");
    const free = (await getSegmentCapacity(ctx, { accessible_topology: inZone("b") })) as {
      available_capacity: number;
    };
    assert.ok(free.available_capacity > 0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
