/** /v1/volumes, /v1/volume/csi/..., /v1/plugins, /v1/plugin/csi/..., /v1/nodes, /v1/node/:id. */
import { notFound, validationError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";
import { validateVolumeSpec, type VolumeSpecPurpose } from "../../structs/volume_validate.js";
import type { CSIVolume } from "../../structs/volume.js";
import { blockingIndex, boolParam, parseSecretsHeader, readJson, sendJson } from "./respond.js";
import { nodeFull, nodeStub, pluginFull, pluginStub, volumeFull, volumeStub } from "./stubs.js";
import { namespaceOf, param, type Ctx, type Route } from "./context.js";

function requireCsiType(ctx: Ctx): void {
  const t = ctx.query.get("type");
  if (t !== null && t !== "csi")
    throw validationError("type", `unsupported type ${JSON.stringify(t)} (want "csi")`);
}

/** Reads `{"Volumes": [...]}` and validates every spec; the one in the URL must be among them. */
async function volumeSpecs(ctx: Ctx, purpose: VolumeSpecPurpose): Promise<CSIVolume[]> {
  const body = await readJson(ctx.req);
  if (!isObject(body) || !Array.isArray(body.Volumes) || body.Volumes.length === 0) {
    throw validationError("Volumes", 'the body must be {"Volumes": [...]} with at least one volume');
  }
  const ns = namespaceOf(ctx) ?? "default";
  const vols = body.Volumes.map((v, i) =>
    validateVolumeSpec(
      isObject(v) && v.Namespace === undefined ? { ...v, Namespace: ns } : v,
      purpose,
      `Volumes[${i}]`,
    ),
  );
  const id = param(ctx, "id");
  if (!vols.some((v) => v.ID === id)) {
    throw validationError("Volumes", `no volume in the body has the ID ${JSON.stringify(id)} from the URL`);
  }
  return vols;
}

export const listVolumes: Route = async (ctx, api) => {
  requireCsiType(ctx);
  const pluginId = ctx.query.get("plugin_id") || undefined;
  const index = await blockingIndex(api.store, ctx.query, ["volumes", "plugins"], ctx.signal);
  const ns = namespaceOf(ctx, true);
  const filter = { ...(ns !== undefined ? { namespace: ns } : {}), ...(pluginId ? { pluginId } : {}) };
  sendJson(ctx.res, api.volumes.list(filter).map(volumeStub), index);
};

export const getVolume: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  const id = param(ctx, "id");
  const index = await blockingIndex(api.store, ctx.query, ["volumes", "plugins", "allocs"], ctx.signal);
  sendJson(
    ctx.res,
    volumeFull(api.volumes.get(ns, id), (a) => api.store.getAlloc(a)),
    index,
  );
};

export const registerVolume: Route = async (ctx, api) => {
  const vols = await volumeSpecs(ctx, "register");
  const { Index } = await api.volumes.register(vols, ctx.signal);
  sendJson(ctx.res, { Warnings: "", Index }, Index);
};

export const deregisterVolume: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  const { Index, Warnings } = await api.volumes.deregister(
    ns,
    param(ctx, "id"),
    boolParam(ctx.query, "force"),
    ctx.signal,
  );
  // Warnings (berth's addition; Nomad's client ignores the body): what a forced deregister left
  // possibly attached because no controller could detach it. Absent when there is none.
  sendJson(ctx.res, Warnings.length > 0 ? { Index, Warnings } : { Index }, Index);
};

export const createVolume: Route = async (ctx, api) => {
  const vols = await volumeSpecs(ctx, "create");
  const { Volumes, Index } = await api.volumes.create(vols, ctx.signal);
  sendJson(
    ctx.res,
    { Volumes: Volumes.map((v) => volumeFull(v, (a) => api.store.getAlloc(a))), Warnings: "", Index },
    Index,
  );
};

export const deleteVolume: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  const secrets = parseSecretsHeader(ctx.req.headers["x-nomad-csi-secrets"]);
  const { Index } = await api.volumes.delete(ns, param(ctx, "id"), secrets, ctx.signal);
  sendJson(ctx.res, { Index }, Index);
};

export const listPlugins: Route = async (ctx, api) => {
  requireCsiType(ctx);
  const index = await blockingIndex(api.store, ctx.query, ["plugins"], ctx.signal);
  sendJson(ctx.res, api.plugins.list().map(pluginStub), index);
};

export const getPlugin: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  const index = await blockingIndex(api.store, ctx.query, ["plugins", "allocs"], ctx.signal);
  const plugin = api.plugins.get(id);
  sendJson(ctx.res, pluginFull(plugin, api.plugins.allocations(plugin)), index);
};

export const listNodes: Route = async (ctx, api) => {
  const index = await blockingIndex(api.store, ctx.query, ["nodes"], ctx.signal);
  const prefix = ctx.query.get("prefix") ?? "";
  const nodes = api.store.listNodes().filter((n) => n.ID.startsWith(prefix));
  sendJson(ctx.res, nodes.map(nodeStub), index);
};

export const getNode: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  const index = await blockingIndex(api.store, ctx.query, ["nodes"], ctx.signal);
  const node = api.store.getNode(id);
  if (!node) throw notFound("node", id);
  sendJson(ctx.res, nodeFull(node), index);
};
