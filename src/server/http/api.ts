/**
 * The HTTP API router (Nomad's /v1 routes). Each request gets an AbortSignal that fires when the
 * client disconnects, so blocking queries and plugin calls stop with it. Errors answer as plain
 * text with the status their code maps to and the code in X-Berth-Error-Code — the router's own
 * answers too (no route: ERR_NOT_FOUND 404 / ERR_METHOD_NOT_ALLOWED 405; malformed URL:
 * ERR_VALIDATION 400); an unexpected error is logged and answers 500 with its message only.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import Router from "find-my-way";
import { asBerthError, BerthError } from "../../structs/errors.js";
import type { Logger } from "../../internal/log.js";
import type { HttpEndpoints, Route } from "./context.js";
import { sendError } from "./respond.js";
import { contentLengthRefusal } from "./body_limit.js";
import type { OriginGuard } from "./origin.js";
import * as jobs from "./routes_jobs.js";
import * as allocOps from "./routes_alloc_ops.js";
import { validateJobRoute } from "./routes_validate.js";
import * as csi from "./routes_csi.js";
import * as ops from "./routes_volume_ops.js";
import * as evals from "./routes_evals.js";
import * as nodes from "./routes_nodes.js";
import * as operator from "./routes_operator.js";
import * as orphans from "./routes_orphans.js";
import * as deployments from "./routes_deployments.js";
import * as jobPlan from "./routes_job_plan.js";

type Method = "GET" | "PUT" | "POST" | "DELETE";

const ROUTES: [Method | Method[], string, Route][] = [
  ["GET", "/v1/jobs", jobs.listJobs],
  [["PUT", "POST"], "/v1/jobs", jobs.registerJob],
  ["GET", "/v1/job/:id", jobs.getJob],
  [["PUT", "POST"], "/v1/job/:id", jobs.registerJobAt],
  [["PUT", "POST"], "/v1/validate/job", validateJobRoute],
  ["DELETE", "/v1/job/:id", jobs.deregisterJob],
  ["GET", "/v1/job/:id/allocations", jobs.jobAllocations],
  ["GET", "/v1/job/:id/evaluations", evals.jobEvals],
  ["GET", "/v1/evaluations", evals.listEvals],
  ["GET", "/v1/evaluation/:id", evals.getEval],
  ["GET", "/v1/evaluation/:id/allocations", evals.evalAllocations],
  ["GET", "/v1/allocations", jobs.listAllocs],
  ["GET", "/v1/allocation/:id", jobs.getAlloc],
  [["PUT", "POST"], "/v1/allocation/:id/stop", allocOps.stopAlloc],
  [["PUT", "POST"], "/v1/client/allocation/:id/signal", allocOps.signalAlloc],
  [["PUT", "POST"], "/v1/client/allocation/:id/restart", allocOps.restartAlloc],
  ["GET", "/v1/client/fs/logs/:id", allocOps.allocLogs],
  ["GET", "/v1/nodes", csi.listNodes],
  ["GET", "/v1/node/:id", csi.getNode],
  [["PUT", "POST"], "/v1/node/:id/drain", nodes.drainNode],
  [["PUT", "POST"], "/v1/node/:id/eligibility", nodes.nodeEligibility],
  ["GET", "/v1/node/:id/allocations", nodes.nodeAllocations],
  // Methods as Nomad's handlers take them (command/agent/csi_endpoint.go): /v1/volumes registers on
  // PUT and POST, /v1/volume/csi/:id and .../create on PUT only; anything else answers 405.
  ["GET", "/v1/volumes", csi.listVolumes],
  [["PUT", "POST"], "/v1/volumes", csi.registerVolume],
  ["GET", "/v1/volume/csi/:id", csi.getVolume],
  ["PUT", "/v1/volume/csi/:id", csi.registerVolume],
  // The body names the volumes; an ID-less URL still gets the body's validation error, not a 404.
  ["PUT", "/v1/volume/csi/", csi.registerVolume],
  ["DELETE", "/v1/volume/csi/:id", csi.deregisterVolume],
  ["PUT", "/v1/volume/csi/:id/create", csi.createVolume],
  ["DELETE", "/v1/volume/csi/:id/delete", csi.deleteVolume],
  ["DELETE", "/v1/volume/csi/:id/detach", ops.detachVolume],
  [["PUT", "POST"], "/v1/volumes/snapshot", ops.createSnapshot],
  ["DELETE", "/v1/volumes/snapshot", ops.deleteSnapshot],
  ["GET", "/v1/volumes/snapshot", ops.listSnapshots],
  ["GET", "/v1/volumes/external", ops.listExternalVolumes],
  ["GET", "/v1/volumes/orphans", orphans.listOrphans],
  [["PUT", "POST"], "/v1/volume/csi/:id/adopt", orphans.adoptOrphan],
  ["DELETE", "/v1/volume/csi/:id/orphan", orphans.deleteOrphan],
  ["GET", "/v1/plugins", csi.listPlugins],
  ["GET", "/v1/plugin/csi/:id", csi.getPlugin],
  ["GET", "/v1/operator/quarantine", operator.listQuarantine],
  ["DELETE", "/v1/operator/quarantine/:table/:key", operator.deleteQuarantined],
  ["GET", "/v1/deployments", deployments.listDeployments],
  ["GET", "/v1/deployment/:id", deployments.getDeployment],
  ["GET", "/v1/deployment/allocations/:id", deployments.deploymentAllocations],
  [["PUT", "POST"], "/v1/deployment/promote/:id", deployments.promoteDeployment],
  [["PUT", "POST"], "/v1/deployment/fail/:id", deployments.failDeployment],
  [["PUT", "POST"], "/v1/deployment/allocation-health/:id", deployments.deploymentAllocHealth],
  ["GET", "/v1/job/:id/deployments", deployments.jobDeployments],
  ["GET", "/v1/job/:id/deployment", deployments.jobLatestDeployment],
  ["GET", "/v1/job/:id/versions", deployments.jobVersions],
  [["PUT", "POST"], "/v1/job/:id/plan", jobPlan.planJobRoute],
];

/** The request handler, and `drain()`: resolves once every route in flight has answered (stop). */
export type ApiHandler = ((req: IncomingMessage, res: ServerResponse) => void) & { drain(): Promise<void> };

/**
 * `guard` (origin.ts) sees every request first: configured response headers, CORS preflight, and
 * the refusal of browser writes from origins that are not allowed. Then a body whose Content-Length
 * passes the limit (body_limit.ts) is refused, whatever the route; then the router.
 */
export function createApiHandler(api: HttpEndpoints, log: Logger, guard?: OriginGuard): ApiHandler {
  const inFlight = new Set<Promise<void>>();
  const router = Router({
    ignoreTrailingSlash: true,
    maxParamLength: 512,
    // IDs are at most 128 characters (structs/ids.ts); a longer path segment is named, not a 404.
    onMaxParamLength: (_path, _req, res) =>
      sendError(
        res,
        new BerthError("ERR_VALIDATION", "url: a path segment is longer than 512 characters", {
          field: "url",
        }),
      ),
    defaultRoute: (req, res) => {
      const path = (req.url ?? "/").split("?")[0] ?? "/";
      const known = (["GET", "PUT", "POST", "DELETE"] as const).some((m) => router.find(m, path) !== null);
      const text = `no route for ${req.method ?? "?"} ${path}`;
      sendError(res, new BerthError(known ? "ERR_METHOD_NOT_ALLOWED" : "ERR_NOT_FOUND", text));
    },
    onBadUrl: (path, _req, res) =>
      sendError(
        res,
        new BerthError("ERR_VALIDATION", `malformed URL ${JSON.stringify(path)}`, { field: "url" }),
      ),
  });
  for (const [method, path, route] of ROUTES) {
    router.on(method, path, (req, res, params) => {
      const url = new URL(req.url ?? "/", "http://localhost");
      const ac = new AbortController();
      res.on("close", () => ac.abort());
      const p: Promise<void> = route({ req, res, params, query: url.searchParams, signal: ac.signal }, api)
        .catch((err: unknown) => {
          const e = asBerthError(err);
          if (e.code === "ERR_INTERNAL")
            log.error("http request failed", { method: req.method, path: url.pathname, error: e.message });
          sendError(res, e);
        })
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    });
  }
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    if (guard && !guard.admit(req, res)) return;
    const tooLarge = contentLengthRefusal(req);
    if (tooLarge) {
      // Never buffered: Node reads and drops the body after the answer (closing the connection at
      // once would reset it, and the client could lose the 413), bounded by the request timeout.
      sendError(res, tooLarge);
      return;
    }
    router.lookup(req, res);
  };
  return Object.assign(handler, {
    async drain(): Promise<void> {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  });
}
