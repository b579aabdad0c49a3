/** /v1/volumes, /v1/volume/csi/..., /v1/plugins, /v1/plugin/csi/..., /v1/nodes, /v1/node/:id. */
import { BerthError, notFound, validationError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";
import { validateVolumeSpec, type VolumeSpecPurpose } from "../../structs/volume_validate.js";
import type { CSIVolume } from "../../structs/volume.js";
import { readJson } from "../wire/http_io.js";
import { blockingIndex, boolParam, parseSecretsHeader, sendJson } from "./respond.js";
import { nodeFull, nodeStub, pluginFull, pluginStub, volumeFull, volumeStub } from "../views/stubs.js";
import { capacityView } from "../views/capacity.js";
import { namespaceOf, param, type Ctx, type Route } from "../request_ctx.js";
import { sendCachedPage } from "./list_cache.js";
import { listOptions, optionsKey, pageOf } from "./list_options.js";
import { nodePageFromStore, volumePageFromStore } from "./list_store_pages.js";
import { claimedOnNode, listHostVolumes } from "./routes_host_volumes.js";
import { authorizeVolumeWrites } from "../acl/authorize.js";
import { authorizeExternalIds } from "../acl/external_ids.js";
import { nsFilter, allowNs } from "../acl/guards.js";
import { volumeWatchKeys, watchKeys } from "../state/watch_keys.js";

/**
 * Nomad's `?type` of the volume and plugin lists: missing answers `[]` (Nomad's handlers do, before
 * anything else), "csi" the CSI list. Any other type: volumes answer 404 "Resource not found"
 * ("host" is handled by the caller), plugins answer JSON null — both as Nomad's handlers.
 */
function listType(ctx: Ctx): "none" | "csi" | "other" {
  const t = ctx.query.getAll("type");
  if (t.length === 0) return "none";
  return t[0] === "csi" ? "csi" : "other";
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
      // Nomad's Go client always sends "Namespace": "" — it means the request's namespace.
      isObject(v) && (v.Namespace === undefined || v.Namespace === null || v.Namespace === "")
        ? { ...v, Namespace: ns }
        : v,
      purpose,
      `Volumes[${i}]`,
    ),
  );
  // The namespaces the volumes will live in, not the URL's (CVE-2024-10975).
  authorizeVolumeWrites(
    ctx,
    vols.map((v) => v.Namespace),
  );
  // PUT /v1/volumes (and Nomad's /v1/volume/csi/ with an empty ID) name no volume in the URL.
  if (ctx.params.id === undefined || ctx.params.id === "") return vols;
  const id = param(ctx, "id");
  if (!vols.some((v) => v.ID === id)) {
    throw validationError("Volumes", `no volume in the body has the ID ${JSON.stringify(id)} from the URL`);
  }
  return vols;
}

export const listVolumes: Route = async (ctx, api) => {
  const type = listType(ctx);
  if (type === "none") return sendJson(ctx.res, [], api.store.tableIndex("volumes"));
  if (ctx.query.get("type") === "host") return listHostVolumes(ctx, api);
  if (type === "other") throw new BerthError("ERR_NOT_FOUND", "Resource not found");
  const opts = listOptions(ctx.query);
  const pluginId = ctx.query.get("plugin_id") || undefined;
  const nodeId = ctx.query.get("node_id") || undefined;
  const index = await blockingIndex(api.store, ctx.query, ["volumes", "plugins"], ctx.signal);
  const ns = namespaceOf(ctx, true);
  const filter = { namespace: ns, pluginId: pluginId || undefined };
  const visible = nsFilter(ctx, api, "csi-list-volume", "csi-read-volume", "csi-mount-volume", "list-jobs");
  const key = `volumes|${ns ?? "*"}|${pluginId ?? ""}|${nodeId ?? ""}|${optionsKey(opts, ctx.query)}${visible.key}`;
  const keep = (v: CSIVolume) => nodeId === undefined || claimedOnNode(v, nodeId);
  await sendCachedPage(ctx.res, api.store, key, index, () => {
    const query = { ...filter, keepNamespace: (n: string) => visible.keep(n), keep };
    return (
      volumePageFromStore(api.store, opts, query, volumeStub) ??
      pageOf(
        api.volumes.list(filter).filter((v) => visible.keep(v.Namespace) && keep(v)),
        opts,
        "namespace-id",
        volumeStub,
      )
    );
  });
};

export const getVolume: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  const id = param(ctx, "id");
  // `claims=true` and `usage=true` (berth's, never sent by Nomad's clients) add the claim records
  // and the measured usage and health (CSIVolume.Usage). Checked before a blocking query waits.
  const claims = boolParam(ctx.query, "claims");
  const usage = boolParam(ctx.query, "usage");
  const index = await blockingIndex(api.store, ctx.query, ["volumes", "plugins", "allocs"], ctx.signal, () =>
    volumeWatchKeys(api.store, ns, id),
  );
  sendJson(
    ctx.res,
    volumeFull(api.volumes.get(ns, id), (a) => api.store.getAlloc(a), { claims, usage }),
    index,
  );
};

export const registerVolume: Route = async (ctx, api) => {
  const vols = await volumeSpecs(ctx, "register");
  authorizeExternalIds(ctx, api, vols);
  const { Index, Volumes } = await api.volumes.register(vols, ctx.signal);
  // Nomad's CSIVolumeRegisterResponse: the volumes as stored, Warnings, and the write's index.
  sendJson(
    ctx.res,
    { Volumes: Volumes.map((v) => volumeFull(v, (a) => api.store.getAlloc(a))), Warnings: "", Index },
    Index,
  );
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
  const type = listType(ctx);
  if (type === "none") return sendJson(ctx.res, [], api.store.tableIndex("plugins"));
  if (type === "other") return sendJson(ctx.res, null, api.store.tableIndex("plugins"));
  const opts = listOptions(ctx.query);
  const index = await blockingIndex(api.store, ctx.query, ["plugins"], ctx.signal);
  await sendCachedPage(ctx.res, api.store, `plugins|${optionsKey(opts, ctx.query)}`, index, () =>
    pageOf(api.plugins.list(), opts, "id", pluginStub),
  );
};

export const getPlugin: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  const capacity = boolParam(ctx.query, "capacity");
  const index = await blockingIndex(api.store, ctx.query, ["plugins", "allocs"], ctx.signal);
  const plugin = api.plugins.get(id);
  // Only the allocations of namespaces the caller may read-job in (Nomad's CSIPlugin.Get).
  const allocs = api.plugins.allocations(plugin).filter((a) => allowNs(ctx, a.Namespace, "read-job"));
  // `capacity=true` (berth's, never sent by Nomad's clients) adds the measured capacities.
  const full = pluginFull(plugin, allocs);
  sendJson(
    ctx.res,
    capacity ? { ...full, Capacity: capacityView(api.store.getPluginCapacity(plugin.ID), Date.now()) } : full,
    index,
  );
};

export const listNodes: Route = async (ctx, api) => {
  const opts = listOptions(ctx.query);
  const index = await blockingIndex(api.store, ctx.query, ["nodes"], ctx.signal);
  await sendCachedPage(
    ctx.res,
    api.store,
    `nodes|${optionsKey(opts, ctx.query)}`,
    index,
    () => nodePageFromStore(api.store, opts, nodeStub) ?? pageOf(api.store.listNodes(), opts, "id", nodeStub),
  );
};

export const getNode: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  const index = await blockingIndex(api.store, ctx.query, ["nodes"], ctx.signal, () => [watchKeys.node(id)]);
  const node = api.store.getNode(id);
  if (!node) throw notFound("node", id);
  sendJson(ctx.res, nodeFull(node), index);
};
