/**
 * Block volumes of csi-hostpath (`attachment_mode = "block-device"`): the volume's bytes are a
 * sparse file `<state-dir>/blocks/<id>.img` of the volume's capacity, made at its first block
 * NodeStage, and served as a loop device:
 *
 * - NodeStage attaches a loop device over the image (one per staging path, so node processes
 *   sharing a state dir never share a device), writes its name to `<staging>/loop` first (so an
 *   interrupted stage is still undone by NodeUnstage), then bind-mounts the device node onto the
 *   file `<staging>/device`;
 * - NodePublish bind-mounts `<staging>/device` onto the file at target_path (the spec: for block,
 *   the SP places the device at target_path, and creates it); a read-only publish gets its own
 *   read-only loop device instead (a read-only mount does not stop writes to a device node), which
 *   NodeUnpublish detaches;
 * - NodeUnstage unmounts `<staging>/device` and detaches the recorded device, only if it is still
 *   a loop device over this volume's image (a device detached and reused meanwhile is left alone);
 * - DeleteVolume refuses while a loop device over the image is mounted anywhere, else detaches
 *   every loop device left over the image (a stage interrupted before it recorded its device) and
 *   removes the image.
 *
 * Every step is idempotent. Paths are in this process's own view.
 */
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import type { WireNodePublishRequest, WireNodeStageRequest } from "../wire.js";
import { rpcError, type HostpathContext } from "./context.js";
import { bindMount, isReadOnly, mountAt, unmountAll } from "./mounter.js";
import { readMounts } from "../../internal/mountinfo.js";
import { isVolumeId } from "./volumes.js";

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(" ")}: ${stderr.trim() || err.message}`));
      else resolve(stdout);
    });
  });
}

export function blockImageOf(stateDir: string, id: string): string {
  if (!isVolumeId(id)) throw new Error(`bad volume id ${JSON.stringify(id)}`);
  return path.join(stateDir, "blocks", id + ".img");
}

/** The loop devices attached over `image` (`losetup -j`), e.g. ["/dev/loop3"]. */
export async function loopDevicesOf(image: string): Promise<string[]> {
  const out = await run("losetup", ["-j", image]);
  return out
    .split("\n")
    .map((l) => /^(\/dev\/loop\d+):/.exec(l)?.[1])
    .filter((d): d is string => d !== undefined);
}

/** The image, made sparse at the volume's capacity when missing (a crash half-way: made again). */
async function ensureImage(ctx: HostpathContext, id: string): Promise<string> {
  const image = blockImageOf(ctx.config.stateDir, id);
  if (await exists(image)) return image;
  const vol = await ctx.volumes.get(id);
  if (!vol) throw rpcError(status.NOT_FOUND, `volume ${id} not found`);
  await fs.mkdir(path.dirname(image), { recursive: true });
  const tmp = `${image}.${process.pid}.tmp`;
  const fh = await fs.open(tmp, "w", 0o600);
  try {
    await fh.truncate(vol.capacityBytes);
  } finally {
    await fh.close();
  }
  await fs.rename(tmp, image);
  return image;
}

async function exists(p: string): Promise<boolean> {
  return (await fs.lstat(p).catch(() => null)) !== null;
}

/** An empty regular file at `p` (the mount point of a bind-mounted device node). */
async function touch(p: string): Promise<void> {
  await (await fs.open(p, "a")).close();
}

/** The device recorded at stage time, if it is still a loop device over the image. */
async function recordedDevice(staging: string, image: string): Promise<string | null> {
  const dev = (await fs.readFile(path.join(staging, "loop"), "utf8").catch(() => "")).trim();
  if (!dev) return null;
  const devices = await loopDevicesOf(image).catch((): string[] => []);
  return devices.includes(dev) ? dev : null;
}

export async function nodeStageBlock(ctx: HostpathContext, req: WireNodeStageRequest): Promise<object> {
  const staging = req.staging_target_path;
  const devicePath = path.join(staging, "device");
  const image = await ensureImage(ctx, req.volume_id);
  if (await mountAt(devicePath)) {
    if (await recordedDevice(staging, image)) return {};
    throw rpcError(status.ALREADY_EXISTS, `${devicePath} is mounted from another source`);
  }
  await fs.mkdir(staging, { recursive: true });
  const dev =
    (await recordedDevice(staging, image)) ?? (await run("losetup", ["-f", "--show", image])).trim();
  try {
    await fs.writeFile(path.join(staging, "loop"), dev + "\n");
    await touch(devicePath);
    await bindMount(dev, devicePath, false);
  } catch (err) {
    await run("losetup", ["-d", dev]).catch(() => undefined);
    await fs.rm(path.join(staging, "loop"), { force: true });
    throw err;
  }
  ctx.log.info("staged block device", { volume_id: req.volume_id, path: staging, device: dev });
  return {};
}

export async function nodePublishBlock(ctx: HostpathContext, req: WireNodePublishRequest): Promise<object> {
  const devicePath = path.join(req.staging_target_path, "device");
  const image = blockImageOf(ctx.config.stateDir, req.volume_id);
  if (!(await mountAt(devicePath)) || !(await recordedDevice(req.staging_target_path, image))) {
    throw rpcError(
      status.FAILED_PRECONDITION,
      `volume ${req.volume_id} is not staged at ${req.staging_target_path}`,
    );
  }
  const existing = await mountAt(req.target_path);
  if (existing) {
    const same = req.readonly
      ? isReadOnly(existing) &&
        (await loopDevicesOf(image)).includes("/dev/" + (await blockDeviceName(req.target_path)))
      : !isReadOnly(existing) && (await sameDevice(existing.mountPoint, devicePath));
    if (same) return {};
    throw rpcError(status.ALREADY_EXISTS, `${req.target_path} is already published with other options`);
  }
  await fs.mkdir(path.dirname(req.target_path), { recursive: true });
  await touch(req.target_path);
  // A read-only mount does not stop writes to a device node: a read-only publish gets its own
  // read-only loop device (detached again by NodeUnpublish).
  const roDev = req.readonly ? (await run("losetup", ["-r", "-f", "--show", image])).trim() : null;
  try {
    await bindMount(roDev ?? devicePath, req.target_path, req.readonly);
  } catch (err) {
    if (roDev) await run("losetup", ["-d", roDev]).catch(() => undefined);
    throw err;
  }
  ctx.log.info("published block device", { volume_id: req.volume_id, path: req.target_path });
  return {};
}

/** The kernel's name of the block device node at `p` (e.g. "loop3"), or null for anything else. */
async function blockDeviceName(p: string): Promise<string | null> {
  const st = await fs.stat(p).catch(() => null);
  if (!st?.isBlockDevice()) return null;
  const major = (st.rdev >> 8) & 0xfff;
  const minor = (st.rdev & 0xff) | ((st.rdev >> 12) & 0xfff00);
  const link = await fs.readlink(`/sys/dev/block/${major}:${minor}`).catch(() => "");
  return link ? path.basename(link) : null;
}

/**
 * NodeUnpublish's block part: when the target holds a read-only loop device over one of this
 * plugin's images (a read-only publish's own), unmounts it and detaches the device. Anything else
 * (a directory, a read-write publish of the staged device) is left to the ordinary unpublish.
 */
export async function nodeUnpublishBlock(ctx: HostpathContext, target: string): Promise<void> {
  const name = await blockDeviceName(target);
  if (!name?.startsWith("loop")) return;
  const sys = `/sys/block/${name}`;
  const ro = (await fs.readFile(`${sys}/ro`, "utf8").catch(() => "")).trim() === "1";
  const backing = (await fs.readFile(`${sys}/loop/backing_file`, "utf8").catch(() => "")).trim();
  if (!ro || path.dirname(backing) !== path.join(ctx.config.stateDir, "blocks")) return;
  await unmountAll(target);
  await run("losetup", ["-d", "/dev/" + name]);
}

async function sameDevice(a: string, b: string): Promise<boolean> {
  const [sa, sb] = await Promise.all([fs.stat(a).catch(() => null), fs.stat(b).catch(() => null)]);
  return sa !== null && sb !== null && sa.isBlockDevice() && sa.rdev === sb.rdev;
}

/**
 * NodeUnstage's block part (the request names no access type, so it looks for what NodeStage
 * left): unmounts `<staging>/device`, detaches the recorded loop device and removes both files. A
 * staging path without them is a no-op.
 */
export async function nodeUnstageBlock(
  ctx: HostpathContext,
  req: { volume_id: string; staging_target_path: string },
): Promise<void> {
  const staging = req.staging_target_path;
  const record = path.join(staging, "loop");
  if (!(await exists(record))) return;
  const devicePath = path.join(staging, "device");
  await unmountAll(devicePath);
  const dev = isVolumeId(req.volume_id)
    ? await recordedDevice(staging, blockImageOf(ctx.config.stateDir, req.volume_id))
    : null;
  if (dev) await run("losetup", ["-d", dev]);
  await fs.rm(devicePath, { force: true });
  await fs.rm(record, { force: true });
  ctx.log.info("unstaged block device", { volume_id: req.volume_id, path: staging, device: dev ?? "" });
}

/**
 * DeleteVolume's block part: FAILED_PRECONDITION while a loop device over the image is mounted
 * anywhere; otherwise every loop device over it is detached and the image removed.
 */
export async function deleteBlockImage(ctx: HostpathContext, id: string): Promise<void> {
  const image = blockImageOf(ctx.config.stateDir, id);
  if (!(await exists(image))) return;
  const devices = await loopDevicesOf(image);
  const roots = new Set(devices.map((d) => "/" + path.basename(d)));
  const mounted = (await readMounts()).find((m) => roots.has(m.root) && m.fsType === "devtmpfs");
  if (mounted) {
    throw rpcError(
      status.FAILED_PRECONDITION,
      `volume ${id}'s block device is still mounted at ${mounted.mountPoint}`,
    );
  }
  for (const d of devices) await run("losetup", ["-d", d]);
  await fs.rm(image, { force: true });
}
