/**
 * The exec driver's per-entry mount script (init_script.ts MOUNT_ENTRY_SH), run by /bin/sh with
 * `mount` replaced by a shell function that prints its arguments: a bind entry is one `mount` call
 * carrying its propagation and read-only flag; a destination that resolves through a symlink —
 * an intermediate directory (checked by the shell's own `cd -P`) or the destination itself — is
 * refused before anything is mounted; the minimal /dev's device nodes are one `cp -a`, and binds of
 * the host's where mknod is refused. The init script's walk before it (NO_LINKS_SH) refuses a
 * symlink anywhere on the way, the last component included, before anything is created.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  MOUNT_ENTRY_SH,
  MOUNT_HELPERS_SH,
  NO_LINKS_SH,
} from "../../../src/client/drivers/exec/init_script.js";

function runEntry(root: string, src: string, dst: string, kind: string, ro: boolean, fakes = "") {
  const script = [
    `__berth_fail() { printf 'FAIL %s\\n' "$*"; exit 125; }`,
    `mount() { printf 'mount %s\\n' "$*"; }`,
    fakes,
    MOUNT_HELPERS_SH,
    `__berth_src=$1 __berth_dst=$2 __berth_kind=$3 __berth_ro=$4`,
    `__berth_target=$5$__berth_dst`,
    MOUNT_ENTRY_SH,
    `printf 'cwd %s\\n' "$PWD"`,
  ].join("\n");
  const r = spawnSync("/bin/sh", ["-c", script, "sh", src, dst, kind, ro ? "ro" : "rw", root], {
    encoding: "utf8",
  });
  return { status: r.status, out: r.stdout.trim().split("\n") };
}

test("a bind entry is one mount call with its propagation and read-only flag", () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "berth-mount-entry-"));
  try {
    const root = path.join(base, "root");
    const src = path.join(base, "src");
    fs.mkdirSync(root);
    fs.mkdirSync(src);
    const ro = runEntry(root, src, "/srv/data", "bind", true);
    assert.deepEqual(ro, {
      status: 0,
      out: [`mount -o ro --bind --make-private -- ${src} ${root}/srv/data`, "cwd /"],
    });
    assert.ok(fs.statSync(path.join(root, "srv/data")).isDirectory());
    const rw = runEntry(root, src, "/alloc", "rbind-slave", false);
    assert.deepEqual(rw.out, [`mount --rbind --make-rslave -- ${src} ${root}/alloc`, "cwd /"]);
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
});

test("a destination that resolves through a symlink is refused before any mount", () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "berth-mount-entry-"));
  try {
    const root = path.join(base, "root");
    const src = path.join(base, "src");
    const outside = path.join(base, "outside");
    for (const d of [root, src, outside]) fs.mkdirSync(d);
    // An intermediate directory swapped for a symlink (the shell's own cd -P check).
    fs.symlinkSync(outside, path.join(root, "local"));
    const via = runEntry(root, src, "/local/x", "bind", false);
    assert.equal(via.status, 125);
    assert.deepEqual(via.out, ["FAIL mount destination /local/x resolves through a symlink"]);
    // The destination itself a symlink to a directory (readlink -f).
    fs.symlinkSync(outside, path.join(root, "data"));
    const self = runEntry(root, src, "/data", "bind", false);
    assert.equal(self.status, 125);
    assert.deepEqual(self.out, ["FAIL mount destination /data resolves through a symlink"]);
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
});

/** NO_LINKS_SH's verdict on ROOT + DST: 0 when no component of it below ROOT is a symlink. */
function noLinks(root: string, dst: string): number | null {
  const script = [NO_LINKS_SH, `__berth_root=$1 __berth_dst=$2`, `__berth_no_links`].join("\n");
  return spawnSync("/bin/sh", ["-c", script, "sh", root, dst]).status;
}

test("the walk before an entry refuses a symlink at any depth and accepts what does not exist yet", () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "berth-no-links-"));
  try {
    const root = path.join(base, "root");
    const outside = path.join(base, "outside");
    fs.mkdirSync(path.join(root, "srv/data"), { recursive: true });
    fs.mkdirSync(outside);
    assert.equal(noLinks(root, "/srv/data"), 0);
    assert.equal(noLinks(root, "/srv/data/not/made/yet"), 0);
    assert.equal(noLinks(root, "/absent"), 0);
    fs.symlinkSync(outside, path.join(root, "local"));
    assert.equal(noLinks(root, "/local"), 1, "the destination itself");
    assert.equal(noLinks(root, "/local/x/y"), 1, "the first component");
    fs.symlinkSync(outside, path.join(root, "srv/data/link"));
    assert.equal(noLinks(root, "/srv/data/link/x"), 1, "a component in the middle");
    fs.symlinkSync(path.join(base, "dangling"), path.join(root, "srv/dangling"));
    assert.equal(noLinks(root, "/srv/dangling"), 1, "a dangling link");
    // Names the shell could mistake for patterns or options are plain components.
    fs.mkdirSync(path.join(root, "-n *"));
    assert.equal(noLinks(root, "/-n */x"), 0);
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
});

test("the minimal /dev: device nodes by one cp -a, binds of the host's where mknod is refused", () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "berth-mount-entry-"));
  try {
    const root = path.join(base, "root");
    fs.mkdirSync(root);
    const binds = (out: string[]) => out.filter((l) => l.startsWith("mount --bind"));
    const made = runEntry(root, "/dev", "/dev", "dev-minimal", false, `cp() { printf 'cp %s\\n' "$*"; }`);
    assert.equal(made.status, 0, made.out.join("\n"));
    assert.ok(made.out.some((l) => l.startsWith("cp -a -- /dev/null /dev/zero")));
    assert.deepEqual(binds(made.out), []);
    fs.rmSync(root, { recursive: true });
    fs.mkdirSync(root);
    const refused = runEntry(root, "/dev", "/dev", "dev-minimal", false, `cp() { return 1; }`);
    assert.equal(refused.status, 0, refused.out.join("\n"));
    assert.deepEqual(
      binds(refused.out),
      ["null", "zero", "full", "random", "urandom", "tty"].map(
        (d) => `mount --bind -- /dev/${d} ${root}/dev/${d}`,
      ),
    );
    assert.ok(
      fs.existsSync(path.join(root, "dev", "pts")) &&
        fs.lstatSync(path.join(root, "dev", "fd")).isSymbolicLink(),
    );
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
});
