/**
 * The fake plugin's default (spec-shaped) answers: in-memory volumes, idempotent by name, publish
 * contexts, and target-path handling like a real node plugin (creates target_path on publish,
 * removes it on unpublish) without mounting anything.
 */
import fs from "node:fs/promises";
import { status } from "@grpc/grpc-js";
import { mountsUnder } from "../../internal/mountinfo.js";
import { FakeRpcError } from "./behaviour.js";
import type { WireCreateVolumeRequest, WireNodePublishRequest, WireNodeStageRequest } from "../wire.js";

export interface FakeVolume {
  volume_id: string;
  name: string;
  capacity_bytes: number;
  volume_context: Record<string, string>;
}

export interface FakeStateOptions {
  requireVolumeContext: boolean;
  removeStagingOnUnstage: boolean;
}

const fail = (code: status, message: string): FakeRpcError => new FakeRpcError(code, message);

export class FakeState {
  /** By volume name. */
  readonly volumes = new Map<string, FakeVolume>();
  /** volume id → node ids it is controller-published to. */
  readonly controllerPublished = new Map<string, Set<string>>();
  /** `${volume_id}\0${staging_target_path}` of staged volumes. */
  readonly staged = new Set<string>();
  /** `${volume_id}\0${target_path}` of published volumes. */
  readonly published = new Set<string>();

  constructor(private readonly opts: FakeStateOptions) {}

  createVolume(req: WireCreateVolumeRequest): object {
    if (!req.name) throw fail(status.INVALID_ARGUMENT, "name is required");
    if (req.volume_capabilities.length === 0)
      throw fail(status.INVALID_ARGUMENT, "volume_capabilities required");
    const capacity = req.capacity_range?.required_bytes || req.capacity_range?.limit_bytes || 1 << 30;
    let vol = this.volumes.get(req.name);
    if (vol && req.capacity_range?.required_bytes && vol.capacity_bytes < req.capacity_range.required_bytes) {
      throw fail(status.ALREADY_EXISTS, `volume ${req.name} exists with a smaller capacity`);
    }
    if (!vol) {
      vol = {
        volume_id: `fake-${req.name}`,
        name: req.name,
        capacity_bytes: capacity,
        volume_context: { "fake.berth.io/name": req.name },
      };
      this.volumes.set(req.name, vol);
    }
    return {
      volume: {
        volume_id: vol.volume_id,
        capacity_bytes: vol.capacity_bytes,
        volume_context: vol.volume_context,
      },
    };
  }

  deleteVolume(req: { volume_id: string }): object {
    if (!req.volume_id) throw fail(status.INVALID_ARGUMENT, "volume_id is required");
    for (const [name, v] of this.volumes) if (v.volume_id === req.volume_id) this.volumes.delete(name);
    return {};
  }

  controllerPublish(req: { volume_id: string; node_id: string; volume_capability: unknown }): object {
    if (!req.volume_id || !req.node_id)
      throw fail(status.INVALID_ARGUMENT, "volume_id and node_id are required");
    if (!req.volume_capability) throw fail(status.INVALID_ARGUMENT, "volume_capability is required");
    const nodes = this.controllerPublished.get(req.volume_id) ?? new Set<string>();
    nodes.add(req.node_id);
    this.controllerPublished.set(req.volume_id, nodes);
    return { publish_context: { "fake.berth.io/device": `/dev/fake/${req.volume_id}` } };
  }

  controllerUnpublish(req: { volume_id: string; node_id: string }): object {
    if (!req.volume_id) throw fail(status.INVALID_ARGUMENT, "volume_id is required");
    this.controllerPublished.get(req.volume_id)?.delete(req.node_id);
    return {};
  }

  nodeStage(req: WireNodeStageRequest): object {
    if (!req.volume_id || !req.staging_target_path) {
      throw fail(status.INVALID_ARGUMENT, "volume_id and staging_target_path are required");
    }
    if (!req.volume_capability) throw fail(status.INVALID_ARGUMENT, "volume_capability is required");
    this.checkContext(req);
    this.staged.add(`${req.volume_id}\0${req.staging_target_path}`);
    return {};
  }

  async nodeUnstage(req: { volume_id: string; staging_target_path: string }): Promise<object> {
    if (!req.volume_id || !req.staging_target_path) {
      throw fail(status.INVALID_ARGUMENT, "volume_id and staging_target_path are required");
    }
    this.staged.delete(`${req.volume_id}\0${req.staging_target_path}`);
    if (this.opts.removeStagingOnUnstage) await removeUnmounted(req.staging_target_path);
    return {};
  }

  async nodePublish(req: WireNodePublishRequest): Promise<object> {
    if (!req.volume_id || !req.target_path)
      throw fail(status.INVALID_ARGUMENT, "volume_id and target_path required");
    if (!req.volume_capability) throw fail(status.INVALID_ARGUMENT, "volume_capability is required");
    this.checkContext(req);
    await fs.mkdir(req.target_path, { recursive: true });
    this.published.add(`${req.volume_id}\0${req.target_path}`);
    return {};
  }

  async nodeUnpublish(req: { volume_id: string; target_path: string }): Promise<object> {
    if (!req.volume_id || !req.target_path)
      throw fail(status.INVALID_ARGUMENT, "volume_id and target_path required");
    this.published.delete(`${req.volume_id}\0${req.target_path}`);
    await removeUnmounted(req.target_path);
    return {};
  }

  private checkContext(req: { volume_context: Record<string, string> }): void {
    if (this.opts.requireVolumeContext && Object.keys(req.volume_context).length === 0) {
      throw fail(status.INVALID_ARGUMENT, "volume_context is required by this plugin");
    }
  }
}

/** Removes a target/staging directory unless something is mounted at or below it. */
async function removeUnmounted(p: string): Promise<void> {
  const mounted = await mountsUnder(p);
  if (mounted.length > 0) throw fail(status.FAILED_PRECONDITION, `${p} still has mounts`);
  await fs.rm(p, { recursive: true, force: true });
}
