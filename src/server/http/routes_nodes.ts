/**
 * /v1/node/:id/drain, /v1/node/:id/eligibility, /v1/node/:id/allocations (Nomad's node routes) and
 * /v1/acl/identity/client-introduction-token (node introduction, rpc/node_intro.ts).
 */
import { notFound } from "../../structs/errors.js";
import { validateDrainRequest, validateEligibilityRequest } from "../../structs/node_validate.js";
import { allocFull } from "../views/stubs.js";
import { param, type Route } from "../request_ctx.js";
import { readJson } from "../wire/http_io.js";
import { blockingIndex, sendJson } from "./respond.js";
import { allowNs } from "../acl/guards.js";
import { watchKeys } from "../state/watch_keys.js";
import { parseIntroTokenRequest } from "../rpc/node_intro.js";

export const drainNode: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  const req = validateDrainRequest(await readJson(ctx.req));
  const res = await api.nodes.updateDrain(id, req);
  sendJson(ctx.res, res, res.Index);
};

export const nodeEligibility: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  const eligibility = validateEligibilityRequest(await readJson(ctx.req));
  const res = await api.nodes.updateEligibility(id, eligibility);
  sendJson(ctx.res, res, res.Index);
};

/** The node's allocs, full records as Nomad answers this route (job snapshots redacted). */
export const nodeAllocations: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  const index = await blockingIndex(api.store, ctx.query, ["allocs"], ctx.signal, () => [
    watchKeys.allocsOfNode(id),
  ]);
  if (!api.store.getNode(id)) throw notFound("node", id);
  // Only the allocs of namespaces the caller may read-job in (Nomad's Node.GetAllocs).
  const allocs = api.store.allocsByNode(id).filter((a) => allowNs(ctx, a.Namespace, "read-job"));
  sendJson(ctx.res, allocs.map(allocFull), index);
};

/**
 * A new node introduction token, `{"JWT": …}` as Nomad answers (ACLCreateClientIntroductionTokenRequest:
 * NodeName, NodePool, TTL in ns). The token appears in this answer only; it is never stored or logged.
 */
export const createIntroToken: Route = async (ctx, api) => {
  const req = parseIntroTokenRequest(await readJson(ctx.req));
  const res = api.nodes.createIntroToken(req);
  ctx.res.setHeader("Cache-Control", "no-store");
  sendJson(ctx.res, res);
};
