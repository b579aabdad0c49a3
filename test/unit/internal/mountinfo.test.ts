/**
 * The one mountinfo reader (src/internal/mountinfo.ts): kernel escapes are decoded, optional fields
 * kept, and paths asked about are compared canonically (a symlinked directory finds its mounts; a
 * symlink is never itself a mount point). Mount tables here are synthetic, listing the canonical
 * paths of real temp directories, as the kernel would; mountHolding is also checked against
 * `findmnt -T` on this process's real table.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  decodeMountPath,
  isMountPoint,
  mountAt,
  mountHolding,
  mountsUnder,
  parseMountinfo,
  type MountEntry,
} from "../../../src/internal/mountinfo.js";

/** A mountinfo line as the kernel writes it: `point` and `root` already escaped. */
function line(id: number, point: string, optional = "shared:1", root = "/"): string {
  const opt = optional === "" ? "" : ` ${optional}`;
  return `${id} 1 0:${id} ${root} ${point} rw,relatime${opt} - tmpfs tmpfs rw`;
}

function escape(p: string): string {
  return p.replace(/[\\ \t\n]/g, (c) => "\\" + c.charCodeAt(0).toString(8).padStart(3, "0"));
}

function table(...points: string[]): MountEntry[] {
  return parseMountinfo(points.map((p, i) => line(i + 10, escape(p))).join("\n") + "\n");
}

function tempTree(): { real: string; link: string } {
  const real = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-mi-")));
  const link = real + "-link";
  fs.symlinkSync(real, link);
  return { real, link };
}

test("mountinfo: octal escapes are decoded (space, tab, newline, backslash)", () => {
  assert.equal(decodeMountPath("/a\\040b\\011c\\012d\\134e"), "/a b\tc\nd\\e");
  assert.equal(decodeMountPath("/plain"), "/plain");
  const [m] = parseMountinfo(line(7, "/mnt/my\\040vol", "shared:3", "/src\\040dir") + "\n");
  assert.equal(m!.mountPoint, "/mnt/my vol");
  assert.equal(m!.root, "/src dir");
});

test("mountinfo: fields, optional fields and the separator", () => {
  const text = [
    "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 shared:4 - ext3 /dev/root rw,errors=continue",
    "37 35 98:0 / /plain ro,nosuid - xfs /dev/sda1 ro",
    "garbage line",
    "",
  ].join("\n");
  const [a, b, ...rest] = parseMountinfo(text);
  assert.deepEqual(a, {
    id: "36",
    root: "/mnt1",
    mountPoint: "/mnt2",
    options: ["rw", "noatime"],
    optional: ["master:1", "shared:4"],
    fsType: "ext3",
    source: "/dev/root",
    superOptions: ["rw", "errors=continue"],
  });
  assert.deepEqual(b!.optional, []);
  assert.deepEqual(b!.superOptions, ["ro"]);
  assert.deepEqual(b!.options, ["ro", "nosuid"]);
  assert.equal(b!.fsType, "xfs");
  assert.deepEqual(rest, [], "malformed lines are skipped");
});

test("mountsUnder: a symlinked directory finds the mounts below its real path, canonical, deepest first", async () => {
  const { real, link } = tempTree();
  try {
    const mounts = table(real, path.join(real, "a"), path.join(real, "a", "b"), real + "x", "/elsewhere");
    const want = [path.join(real, "a", "b"), path.join(real, "a"), real];
    assert.deepEqual(await mountsUnder(real, mounts), want);
    assert.deepEqual(await mountsUnder(link, mounts), want, "through the symlink");
    assert.deepEqual(await mountsUnder(link + "/", mounts), want, "trailing slash");
    assert.deepEqual(await mountsUnder(path.join(link, "a"), mounts), want.slice(0, 2), "below the symlink");
    assert.deepEqual(await mountsUnder(path.join(link, "missing"), mounts), [], "a missing tail is kept");
  } finally {
    fs.rmSync(link);
    fs.rmSync(real, { recursive: true });
  }
});

test("mountsUnder: a directory whose name has a space matches its escaped mount point", async () => {
  const { real, link } = tempTree();
  const spaced = path.join(real, "my vol");
  fs.mkdirSync(spaced);
  try {
    const mounts = table(spaced, path.join(spaced, "in\tside"));
    assert.deepEqual(await mountsUnder(path.join(link, "my vol"), mounts), [
      path.join(spaced, "in\tside"),
      spaced,
    ]);
    assert.equal(await isMountPoint(path.join(link, "my vol"), mounts), true);
  } finally {
    fs.rmSync(link);
    fs.rmSync(real, { recursive: true });
  }
});

test("mountAt: the parent is resolved, the last component is not (a symlink is never a mount point)", async () => {
  const { real, link } = tempTree();
  const target = path.join(real, "target");
  fs.mkdirSync(target);
  const sneaky = path.join(real, "sneaky");
  fs.symlinkSync(target, sneaky);
  try {
    const mounts = table(target, target);
    assert.equal(
      (await mountAt(path.join(link, "target"), mounts))?.id,
      "11",
      "topmost of two, via a symlinked parent",
    );
    assert.equal(await isMountPoint(target, mounts), true);
    assert.equal(await isMountPoint(sneaky, mounts), false, "a symlink to a mount is not a mount");
    assert.equal(await isMountPoint(real, mounts), false);
    assert.equal(await isMountPoint(path.join(real, "nope"), mounts), false);
  } finally {
    fs.rmSync(link);
    fs.rmSync(real, { recursive: true });
  }
});

test("mountsUnder and mountAt read this process's mountinfo by default", async () => {
  assert.ok((await mountsUnder("/")).includes("/"));
  assert.equal((await mountAt("/"))?.mountPoint, "/");
});

test("mountHolding: the deepest mount at or above the canonical path, never a sibling with a longer name", async () => {
  const { real, link } = tempTree();
  try {
    const mounts = table("/", real, path.join(real, "a"), path.join(real, "ab"));
    assert.equal(await mountHolding(path.join(link, "a", "deep", "er"), mounts), path.join(real, "a"));
    assert.equal(
      await mountHolding(path.join(real, "a"), mounts),
      path.join(real, "a"),
      "a mount point itself",
    );
    assert.equal(await mountHolding(path.join(real, "abc"), mounts), real, "ab is not a parent of abc");
    assert.equal(await mountHolding("/nowhere/at/all", mounts), "/");
  } finally {
    fs.rmSync(link);
    fs.rmSync(real, { recursive: true });
  }
});

test("mountHolding: agrees with findmnt -T on this process's mounts", async () => {
  for (const p of [os.tmpdir(), "/proc/self", "/usr/bin", process.cwd(), "/"]) {
    const want = execFileSync("findmnt", ["-n", "-o", "TARGET", "-T", p], { encoding: "utf8" }).trim();
    assert.equal(await mountHolding(p), want, p);
  }
});
