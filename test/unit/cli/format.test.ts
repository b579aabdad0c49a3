import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiError } from "../../../src/api/index.js";
import { ago, bytes, describeError, formatTimeNs, kv, shortId, table } from "../../../src/cli/format.js";
import { formatMountOptions } from "../../../src/cli/commands/volume_format.js";

describe("format helpers", () => {
  it("table aligns columns two spaces apart without trailing spaces", () => {
    assert.deepEqual(
      table([
        ["ID", "Status", "X"],
        ["abcdef", "ok", ""],
      ]),
      ["ID      Status  X", "abcdef  ok"],
    );
  });

  it("kv aligns the equals signs", () => {
    assert.deepEqual(
      kv([
        ["ID", "a"],
        ["Long Key", "b"],
      ]),
      ["ID       = a", "Long Key = b"],
    );
  });

  it("ago keeps the two largest units", () => {
    const now = 10_000_000_000;
    assert.equal(ago(now - 5_000, now), "5s ago");
    assert.equal(ago(now - 90 * 60_000, now), "1h30m ago");
    assert.equal(ago(now - (3600 + 5) * 1000, now), "1h ago");
    assert.equal(ago(now - 2 * 86_400_000 - 3_600_000, now), "2d1h ago");
    assert.equal(ago(now, now), "just now");
    assert.equal(ago(0, now), "<none>");
  });

  it("bytes prints IEC units like go-humanize", () => {
    assert.equal(bytes(0), "0 B");
    assert.equal(bytes(1023), "1023 B");
    assert.equal(bytes(1536), "1.5 KiB");
    assert.equal(bytes(10 * 2 ** 20), "10 MiB");
    assert.equal(bytes(2 ** 30), "1.0 GiB");
  });

  it("short IDs, timestamps and errors", () => {
    assert.equal(shortId("0123456789abcdef", false), "01234567");
    assert.equal(shortId("0123456789abcdef", true), "0123456789abcdef");
    assert.equal(formatTimeNs(Date.UTC(2026, 0, 2, 3, 4, 5, 678) * 1e6), "2026-01-02T03:04:05Z");
    assert.equal(formatTimeNs(0), "<none>");
    assert.equal(describeError(new ApiError(409, "conflict")), "Unexpected response code: 409 (conflict)");
    assert.equal(describeError(new Error("plain")), "plain");
  });

  it("mount options never show flags, even unredacted ones", () => {
    assert.equal(formatMountOptions(null), "<none>");
    assert.equal(formatMountOptions({ FSType: "", MountFlags: [] }), "<none>");
    assert.equal(formatMountOptions({ FSType: "ext4", MountFlags: [] }), "fs_type: ext4");
    assert.equal(formatMountOptions({ FSType: "", MountFlags: ["password=hunter2"] }), "flags: [REDACTED]");
  });
});
