/**
 * Volume operations beyond register/create/delete, in Nomad's routes and shapes:
 *   PUT/POST /v1/volumes/snapshot                       {"Snapshots": [...]} → {"Snapshots": [...]}
 *   DELETE   /v1/volumes/snapshot?plugin_id=&snapshot_id=
 *   GET      /v1/volumes/snapshot?plugin_id=&per_page=&next_token= → {"Snapshots", "NextToken"}
 *   GET      /v1/volumes/external?plugin_id=&per_page=&next_token= → {"Volumes", "NextToken"}
 *   DELETE   /v1/volume/csi/:id/detach?node=
 * Secrets arrive in the body (create) or the X-Nomad-CSI-Secrets header, never in a URL, and are
 * never answered.
 */
import { validationError } from "../../structs/errors.js";
import { checkId } from "../../structs/ids.js";
import { isObject } from "../../structs/json_check.js";
import { redactSnapshot } from "../../structs/snapshot.js";
import { parseSnapshotRequest } from "../rpc/volume_snapshot.js";
import { namespaceOf, param, type Ctx, type Route } from "../request_ctx.js";
import { readJson } from "../wire/http_io.js";
import { parseSecretsHeader, sendJson } from "./respond.js";
import { visibleExternal } from "../acl/external_ids.js";
import { CSI_LIST_OPS } from "../acl/guards.js";

function required(ctx: Ctx, name: string): string {
  const v = ctx.query.get(name);
  if (v === null || v === "") throw validationError(name, "is required");
  return checkId(name, v);
}

/** Nomad's paging parameters: `per_page` (0 = the plugin decides) and `next_token`. */
function paging(ctx: Ctx): { perPage: number; nextToken: string } {
  const raw = ctx.query.get("per_page") ?? "";
  // Decimal digits only (Number() would also take "0x10", "1e3", " 5").
  const perPage = raw === "" ? 0 : /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(perPage) || perPage > 2 ** 31 - 1) {
    throw validationError("per_page", "must be a non-negative decimal integer below 2^31");
  }
  return { perPage, nextToken: ctx.query.get("next_token") ?? "" };
}

export const createSnapshot: Route = async (ctx, api) => {
  const body = await readJson(ctx.req);
  if (!isObject(body) || !Array.isArray(body.Snapshots) || body.Snapshots.length === 0) {
    throw validationError("Snapshots", 'the body must be {"Snapshots": [...]} with at least one snapshot');
  }
  const reqs = body.Snapshots.map((s, i) => parseSnapshotRequest(s, `Snapshots[${i}]`));
  const ns = namespaceOf(ctx) ?? "default";
  const snaps = await api.volumes.snapshots.create(ns, reqs, ctx.signal);
  const index = api.store.index();
  sendJson(ctx.res, { Snapshots: snaps.map(redactSnapshot), Index: index }, index);
};

export const deleteSnapshot: Route = async (ctx, api) => {
  const pluginId = required(ctx, "plugin_id");
  const snapshotId = ctx.query.get("snapshot_id") ?? "";
  if (snapshotId === "") throw validationError("snapshot_id", "is required");
  const secrets = parseSecretsHeader(ctx.req.headers["x-nomad-csi-secrets"]);
  await api.volumes.snapshots.delete(pluginId, snapshotId, secrets, ctx.signal);
  const index = api.store.index();
  sendJson(ctx.res, { Index: index }, index);
};

export const listSnapshots: Route = async (ctx, api) => {
  const pluginId = required(ctx, "plugin_id");
  const secrets = parseSecretsHeader(ctx.req.headers["x-nomad-csi-secrets"]);
  const res = await api.volumes.snapshots.list(pluginId, { ...paging(ctx), secrets }, ctx.signal);
  sendJson(
    ctx.res,
    { Snapshots: res.Snapshots.map(redactSnapshot), NextToken: res.NextToken },
    api.store.index(),
  );
};

export const listExternalVolumes: Route = async (ctx, api) => {
  const pluginId = required(ctx, "plugin_id");
  const res = await api.volumes.listExternal(pluginId, paging(ctx), ctx.signal);
  const Volumes = visibleExternal(ctx, api, pluginId, res.Volumes, CSI_LIST_OPS);
  sendJson(ctx.res, { ...res, Volumes }, api.store.index());
};

export const detachVolume: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  const node = required(ctx, "node");
  await api.volumes.detach(ns, param(ctx, "id"), node, ctx.signal);
  const index = api.store.index();
  sendJson(ctx.res, { Index: index }, index);
};
