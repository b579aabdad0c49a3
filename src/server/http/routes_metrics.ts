/**
 * GET /v1/metrics — the agent's metrics (Nomad's command/agent/metrics_endpoint.go):
 * - no `format`: Nomad's JSON (go-metrics' MetricsSummary, internal/metrics/summary.ts);
 * - `format=prometheus`: the Prometheus text exposition, only when the agent config's
 *   `telemetry { prometheus_metrics = true }` (or -dev) says so; otherwise 415 with Nomad's text
 *   "Prometheus is not enabled";
 * - any other `format`: 400 naming the parameter (Nomad would answer JSON; berth refuses input it
 *   does not understand rather than guess).
 * ACL: none by default, as Nomad's (its docs: "ACL Required: none"); the token is not even
 * resolved. What the metrics carry is bounded by construction: names, counts, plugin/volume IDs,
 * route templates — but those IDs are every namespace's, so `telemetry { metrics_require_acl =
 * true }` makes the route need `agent:read` when ACLs are on.
 */
import type { ServerResponse } from "node:http";
import { BerthError, validationError } from "../../structs/errors.js";
import type { Telemetry } from "../../internal/metrics/telemetry.js";
import { aclOf, type Guard } from "../acl/guards.js";
import { permissionDenied } from "../acl/endpoint.js";
import type { Ctx, HttpEndpoints } from "../request_ctx.js";
import { sendJson } from "./respond.js";

export const METRICS_GUARD: Guard = {
  needs: "none (as Nomad's); agent: read with telemetry.metrics_require_acl",
  check(ctx, api) {
    const acl = aclOf(ctx);
    if (api.telemetry?.settings.metricsRequireAcl && acl !== undefined && !acl.allowAgentRead())
      throw permissionDenied();
  },
  resolvesToken: (api) => api.telemetry?.settings.metricsRequireAcl === true,
};

export async function getMetrics(ctx: Ctx, api: HttpEndpoints): Promise<void> {
  const t = api.telemetry;
  if (!t) throw new BerthError("ERR_INTERNAL", "this agent keeps no metrics");
  await sendMetrics(ctx.res, t, ctx.query.get("format") ?? "");
}

/** The answer for `format` from `t` (also a client-only agent's, agent/client_http.ts). */
export async function sendMetrics(res: ServerResponse, t: Telemetry, format: string): Promise<void> {
  if (format === "") {
    sendJson(res, await t.summary());
    return;
  }
  if (format !== "prometheus") {
    throw validationError(
      "format",
      `unknown metrics format ${JSON.stringify(format)}: only "prometheus" is supported (leave it out for JSON)`,
    );
  }
  if (!t.settings.prometheusMetrics) {
    throw new BerthError("ERR_UNSUPPORTED_MEDIA_TYPE", "Prometheus is not enabled");
  }
  const text = await t.prometheus();
  res.writeHead(200, { "Content-Type": t.contentType });
  res.end(text);
}
