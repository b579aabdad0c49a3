/**
 * Orphaned storage of interrupted volume creates (server/orphans/). Nomad has no such routes; they
 * follow its volume routes' patterns (a `/v1/volumes/...` list with `?type=csi`, `plugin_id` and
 * `namespace` filters answering a JSON array with X-Nomad-Index; per-volume actions under
 * `/v1/volume/csi/:id/...` as `create` and `delete` are):
 *   GET        /v1/volumes/orphans?type=csi&plugin_id=&namespace=   → [CSIVolumeOrphan...]
 *   PUT/POST   /v1/volume/csi/:id/adopt?namespace=                  → {"Volumes": [volume], "Index"}
 *   DELETE     /v1/volume/csi/:id/orphan?namespace=  (X-Nomad-CSI-Secrets) → {"Index"}
 * No answer carries secrets: an orphan is its names and the plugin's unrecorded storage IDs.
 */
import { validationError } from "../../structs/errors.js";
import { checkId } from "../../structs/ids.js";
import { namespaceOf, param, type Route } from "../request_ctx.js";
import { nsFilter } from "../acl/guards.js";
import { blockingIndex, parseSecretsHeader, sendJson } from "./respond.js";
import { volumeFull } from "../views/stubs.js";

export const listOrphans: Route = async (ctx, api) => {
  const t = ctx.query.get("type");
  if (t !== null && t !== "csi")
    throw validationError("type", `unsupported type ${JSON.stringify(t)} (want "csi")`);
  const pluginId = ctx.query.get("plugin_id") || undefined;
  const ns = namespaceOf(ctx, true);
  const index = await blockingIndex(api.store, ctx.query, ["intents", "volumes"], ctx.signal);
  const filter = {
    namespace: ns,
    pluginId: pluginId !== undefined ? checkId("plugin_id", pluginId) : undefined,
  };
  const visible = nsFilter(ctx, api, "csi-list-volume", "csi-read-volume", "csi-mount-volume", "list-jobs");
  const orphans = await api.volumes.orphans.list(filter, ctx.signal);
  sendJson(
    ctx.res,
    orphans.filter((o) => visible.keep(o.Namespace)),
    index,
  );
};

export const adoptOrphan: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  const { Volume, Index } = await api.volumes.orphans.adopt(ns, param(ctx, "id"), ctx.signal);
  sendJson(
    ctx.res,
    { Volumes: [volumeFull(Volume, (a) => api.store.getAlloc(a))], Warnings: "", Index },
    Index,
  );
};

export const deleteOrphan: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  const secrets = parseSecretsHeader(ctx.req.headers["x-nomad-csi-secrets"]);
  const { Index } = await api.volumes.orphans.delete(ns, param(ctx, "id"), secrets, ctx.signal);
  sendJson(ctx.res, { Index }, Index);
};
