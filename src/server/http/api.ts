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
import type { Ctx, HttpEndpoints, Route } from "../request_ctx.js";
import { sendError } from "../wire/http_io.js";
import { contentLengthRefusal } from "../wire/body_limit.js";
import type { OriginGuard } from "./origin.js";
import * as jobs from "./routes_jobs.js";
import * as launch from "./routes_job_launch.js";
import * as allocOps from "./routes_alloc_ops.js";
import * as allocFs from "./routes_alloc_fs.js";
import { validateJobRoute } from "./routes_validate.js";
import { parseJobRoute } from "./routes_job_parse.js";
import * as csi from "./routes_csi.js";
import * as ops from "./routes_volume_ops.js";
import * as evals from "./routes_evals.js";
import * as nodes from "./routes_nodes.js";
import * as operator from "./routes_operator.js";
import * as system from "./routes_system.js";
import * as orphans from "./routes_orphans.js";
import * as deployments from "./routes_deployments.js";
import * as jobScale from "./routes_job_scale.js";
import * as jobPlan from "./routes_job_plan.js";
import * as namespaces from "./routes_namespaces.js";
import * as acl from "./routes_acl.js";
import * as status from "./routes_status.js";
import * as agent from "./routes_agent.js";
import { jobSummary } from "./routes_job_summary.js";
import { search } from "./routes_search.js";
import { ownsBodyLimit, restoreSnapshotRoute, saveSnapshotRoute, SNAPSHOT_PATH } from "./routes_snapshot.js";
import { fuzzySearch } from "./routes_search_fuzzy.js";
import { bindLeaderView } from "./leader_headers.js";
import * as g from "../acl/guards.js";
import type { Guard } from "../acl/guards.js";
import { requestSecret } from "../acl/secret.js";
import { eventStream } from "./routes_events.js";
import { EVENT_STREAM_GUARD } from "../events/acl.js";
import { getMetrics, METRICS_GUARD } from "./routes_metrics.js";
import { requestRecorder } from "./request_metrics.js";
import { UI_PUBLIC, uiPage, uiRoot } from "./ui_static.js";

type Method = "GET" | "PUT" | "POST" | "DELETE";

// The last column is what the caller's ACL token must allow (server/acl/guards.ts), checked before
// the route runs when ACLs are on; Nomad's checks of the same endpoint (nomad/*_endpoint.go).
const SUBMIT = ["submit-job", "register-job"];
const CSI_READ = ["csi-read-volume", "csi-mount-volume", "read-job"];
const CSI_LIST = g.CSI_LIST_OPS;
const JOB_BODY =
  "job's namespace: submit-job | register-job; + csi-mount-volume, plugin: read per CSI volume";
const PLAN_BODY = "job's namespace: submit-job | plan-job; + csi-mount-volume, plugin: read per CSI volume";
const VOLUME_BODY = "each volume's namespace: csi-write-volume; plugin: read";

const ROUTES: [Method | Method[], string, Route, Guard][] = [
  ["GET", "/v1/jobs", jobs.listJobs, g.ns("list-jobs")],
  [["PUT", "POST"], "/v1/jobs", jobs.registerJob, g.body(JOB_BODY, ...SUBMIT)],
  ["GET", "/v1/job/:id", jobs.getJob, g.ns("read-job")],
  [["PUT", "POST"], "/v1/job/:id", jobs.registerJobAt, g.body(JOB_BODY, ...SUBMIT)],
  [["PUT", "POST"], "/v1/validate/job", validateJobRoute, g.ns("read-job")],
  [["PUT", "POST"], "/v1/jobs/parse", parseJobRoute, g.ns("parse-job", "submit-job")],
  ["DELETE", "/v1/job/:id", jobs.deregisterJob, g.JOB_DEREGISTER],
  ["GET", "/v1/job/:id/allocations", jobs.jobAllocations, g.ns("read-job")],
  ["GET", "/v1/job/:id/summary", jobSummary, g.ns("read-job")],
  [["PUT", "POST"], "/v1/job/:id/dispatch", launch.dispatchJob, g.ns("dispatch-job")],
  // Nomad's Periodic.Force: dispatch-job or submit-job.
  [["PUT", "POST"], "/v1/job/:id/periodic/force", launch.forcePeriodic, g.ns("dispatch-job", "submit-job")],
  ["GET", "/v1/job/:id/evaluations", evals.jobEvals, g.ns("read-job")],
  ["GET", "/v1/evaluations", evals.listEvals, g.ns("read-job")],
  ["GET", "/v1/evaluation/:id", evals.getEval, g.objectNs("eval", "read-job")],
  ["GET", "/v1/evaluation/:id/allocations", evals.evalAllocations, g.objectNs("eval", "read-job")],
  ["GET", "/v1/allocations", jobs.listAllocs, g.ns("read-job")],
  ["GET", "/v1/allocation/:id", jobs.getAlloc, g.objectNs("alloc", "read-job")],
  [["PUT", "POST"], "/v1/allocation/:id/stop", allocOps.stopAlloc, g.objectNs("alloc", "alloc-lifecycle")],
  [
    ["PUT", "POST"],
    "/v1/client/allocation/:id/signal",
    allocOps.signalAlloc,
    g.objectNs("alloc", "alloc-lifecycle"),
  ],
  [
    ["PUT", "POST"],
    "/v1/client/allocation/:id/restart",
    allocOps.restartAlloc,
    g.objectNs("alloc", "alloc-lifecycle"),
  ],
  ["GET", "/v1/client/allocation/:id/stats", allocOps.allocStats, g.objectNs("alloc", "read-job")],
  ["GET", "/v1/client/fs/logs/:id", allocOps.allocLogs, g.objectNs("alloc", "read-logs", "read-fs")],
  // Nomad's FileSystem.List/Stat/Stream: read-fs in the alloc's namespace.
  ["GET", "/v1/client/fs/ls/:id", allocFs.fsList, g.objectNs("alloc", "read-fs")],
  ["GET", "/v1/client/fs/stat/:id", allocFs.fsStat, g.objectNs("alloc", "read-fs")],
  ["GET", "/v1/client/fs/readat/:id", allocFs.fsReadAt, g.objectNs("alloc", "read-fs")],
  ["GET", "/v1/client/fs/cat/:id", allocFs.fsCat, g.objectNs("alloc", "read-fs")],
  ["GET", "/v1/client/fs/stream/:id", allocFs.fsStream, g.objectNs("alloc", "read-fs")],
  ["GET", "/v1/nodes", csi.listNodes, g.node("read")],
  ["GET", "/v1/node/:id", csi.getNode, g.node("read")],
  [["PUT", "POST"], "/v1/node/:id/drain", nodes.drainNode, g.node("write")],
  [["PUT", "POST"], "/v1/node/:id/eligibility", nodes.nodeEligibility, g.node("write")],
  ["GET", "/v1/node/:id/allocations", nodes.nodeAllocations, g.node("read")],
  // Nomad's route and capability for `node intro create` (rpc/node_intro.ts).
  [["PUT", "POST"], "/v1/acl/identity/client-introduction-token", nodes.createIntroToken, g.node("write")],
  // Methods as Nomad's handlers take them (command/agent/csi_endpoint.go): /v1/volumes registers on
  // PUT and POST, /v1/volume/csi/:id and .../create on PUT only; anything else answers 405.
  ["GET", "/v1/volumes", csi.listVolumes, g.VOLUME_LIST],
  [["PUT", "POST"], "/v1/volumes", csi.registerVolume, g.body(VOLUME_BODY, "csi-write-volume")],
  ["GET", "/v1/volume/csi/:id", csi.getVolume, g.ns(...CSI_READ)],
  ["PUT", "/v1/volume/csi/:id", csi.registerVolume, g.body(VOLUME_BODY, "csi-write-volume")],
  // The body names the volumes; an ID-less URL still gets the body's validation error, not a 404.
  ["PUT", "/v1/volume/csi/", csi.registerVolume, g.body(VOLUME_BODY, "csi-write-volume")],
  ["DELETE", "/v1/volume/csi/:id", csi.deregisterVolume, g.ns("csi-write-volume")],
  ["PUT", "/v1/volume/csi/:id/create", csi.createVolume, g.body(VOLUME_BODY, "csi-write-volume")],
  ["DELETE", "/v1/volume/csi/:id/delete", csi.deleteVolume, g.nsAndPluginRead("csi-write-volume")],
  ["DELETE", "/v1/volume/csi/:id/detach", ops.detachVolume, g.nsAndPluginRead("csi-mount-volume")],
  [["PUT", "POST"], "/v1/volumes/snapshot", ops.createSnapshot, g.nsAndPluginRead("csi-write-volume")],
  ["DELETE", "/v1/volumes/snapshot", ops.deleteSnapshot, g.nsAndPluginRead("csi-write-volume")],
  ["GET", "/v1/volumes/snapshot", ops.listSnapshots, g.nsAndPluginRead(...CSI_LIST)],
  ["GET", "/v1/volumes/external", ops.listExternalVolumes, g.nsAndPluginRead(...CSI_LIST)],
  ["GET", "/v1/volumes/orphans", orphans.listOrphans, g.nsAndPluginRead(...CSI_LIST)],
  [["PUT", "POST"], "/v1/volume/csi/:id/adopt", orphans.adoptOrphan, g.nsAndPluginRead("csi-write-volume")],
  ["DELETE", "/v1/volume/csi/:id/orphan", orphans.deleteOrphan, g.nsAndPluginRead("csi-write-volume")],
  ["GET", "/v1/plugins", csi.listPlugins, g.plugin("list")],
  ["GET", "/v1/plugin/csi/:id", csi.getPlugin, g.plugin("read")],
  ["GET", "/v1/metrics", getMetrics, METRICS_GUARD],
  ["GET", "/v1/operator/quarantine", operator.listQuarantine, g.operator("read")],
  ["DELETE", "/v1/operator/quarantine/:table/:key", operator.deleteQuarantined, g.operator("write")],
  // Nomad's snapshot routes: a management token only (nomad/operator_endpoint.go).
  ["GET", SNAPSHOT_PATH, saveSnapshotRoute, g.MANAGEMENT],
  [["PUT", "POST"], SNAPSHOT_PATH, restoreSnapshotRoute, g.MANAGEMENT],
  ["PUT", "/v1/system/gc", system.forceGc, g.MANAGEMENT],
  ["PUT", "/v1/system/reconcile/summaries", system.reconcileSummaries, g.MANAGEMENT],
  ["GET", "/v1/deployments", deployments.listDeployments, g.ns("read-job")],
  ["GET", "/v1/deployment/:id", deployments.getDeployment, g.objectNs("deployment", "read-job")],
  [
    "GET",
    "/v1/deployment/allocations/:id",
    deployments.deploymentAllocations,
    g.objectNs("deployment", "read-job"),
  ],
  [
    ["PUT", "POST"],
    "/v1/deployment/promote/:id",
    deployments.promoteDeployment,
    g.objectNs("deployment", "submit-job", "promote-deployment"),
  ],
  [
    ["PUT", "POST"],
    "/v1/deployment/fail/:id",
    deployments.failDeployment,
    g.objectNs("deployment", "submit-job", "fail-deployment"),
  ],
  [
    ["PUT", "POST"],
    "/v1/deployment/allocation-health/:id",
    deployments.deploymentAllocHealth,
    g.objectNs("deployment", "submit-job", "set-alloc-health-deployment"),
  ],
  ["GET", "/v1/job/:id/deployments", deployments.jobDeployments, g.ns("read-job")],
  ["GET", "/v1/job/:id/deployment", deployments.jobLatestDeployment, g.ns("read-job")],
  ["GET", "/v1/job/:id/versions", deployments.jobVersions, g.ns("read-job")],
  [
    ["PUT", "POST"],
    "/v1/deployment/pause/:id",
    deployments.pauseDeployment,
    g.objectNs("deployment", "submit-job", "pause-deployment"),
  ],
  [["PUT", "POST"], "/v1/job/:id/revert", jobScale.revertJob, g.ns("submit-job", "revert-job")],
  // Nomad's Job.Scale: scale-job or submit-job; Job.ScaleStatus: read-job-scaling or read-job.
  [["PUT", "POST"], "/v1/job/:id/scale", jobScale.scaleJob, g.ns("scale-job", "submit-job")],
  ["GET", "/v1/job/:id/scale", jobScale.jobScaleStatus, g.ns("read-job-scaling", "read-job")],
  [["PUT", "POST"], "/v1/job/:id/plan", jobPlan.planJobRoute, g.body(PLAN_BODY, "submit-job", "plan-job")],
  [["PUT", "POST"], "/v1/acl/bootstrap", acl.bootstrap, g.BOOTSTRAP],
  [
    "GET",
    "/v1/acl/policies",
    acl.listPolicies,
    g.own("any token (management: all; others: their own policies)"),
  ],
  [
    "GET",
    "/v1/acl/policy/:name",
    acl.getPolicy,
    g.own("management, a token holding the policy, or anyone for `anonymous`"),
  ],
  [["PUT", "POST"], "/v1/acl/policy/:name", acl.upsertPolicy, g.own("management")],
  ["DELETE", "/v1/acl/policy/:name", acl.deletePolicy, g.own("management")],
  ["GET", "/v1/acl/tokens", acl.listTokens, g.own("management")],
  [["PUT", "POST"], "/v1/acl/token", acl.upsertToken, g.own("management")],
  ["GET", "/v1/acl/token/self", acl.tokenSelf, g.own("any token (anonymous: Nomad's anonymous token)")],
  ["GET", "/v1/acl/token/:accessor", acl.getToken, g.own("management, or the token itself")],
  [["PUT", "POST"], "/v1/acl/token/:accessor", acl.upsertToken, g.own("management")],
  ["DELETE", "/v1/acl/token/:accessor", acl.deleteToken, g.own("management")],
  ["GET", "/v1/namespaces", namespaces.listNamespaces, g.NAMESPACE_LIST],
  ["GET", "/v1/namespace/:name", namespaces.getNamespace, g.NAMESPACE_READ],
  [["PUT", "POST"], "/v1/namespace/:name", namespaces.putNamespaceAt, g.MANAGEMENT],
  ["DELETE", "/v1/namespace/:name", namespaces.deleteNamespace, g.MANAGEMENT],
  [["PUT", "POST"], "/v1/namespace", namespaces.putNamespace, g.MANAGEMENT],
  [["GET", "DELETE"], "/v1/namespace", namespaces.missingName, g.own("none (answers 400: no name)")],
  ["GET", "/v1/event/stream", eventStream, EVENT_STREAM_GUARD],
  // The web UI (ui_static.ts): `/` redirects to it, everything under /ui is its static files.
  ["GET", "/", uiRoot, UI_PUBLIC],
  ["GET", "/ui", uiPage, UI_PUBLIC],
  ["GET", "/ui/*", uiPage, UI_PUBLIC],
  ["GET", "/v1/status/leader", status.statusLeader, g.own("none (anyone, as Nomad)")],
  ["GET", "/v1/status/peers", status.statusPeers, g.own("none (anyone, as Nomad)")],
  ["GET", "/v1/agent/members", status.agentMembers, g.node("read")],
  // Nomad's health check needs no token (load balancers call it); self needs agent:read.
  ["GET", "/v1/agent/health", agent.agentHealth, g.own("none (anyone, as Nomad)")],
  ["GET", "/v1/agent/self", agent.agentSelf, g.agent("read")],
  ["GET", "/v1/regions", agent.regions, g.own("none (anyone, as Nomad)")],
  [["PUT", "POST"], "/v1/search", search, g.SEARCH],
  [["PUT", "POST"], "/v1/search/fuzzy", fuzzySearch, g.SEARCH],
];

/** Every route with what it requires: the README's ACL table is checked against this. */
export function routeRequirements(): { methods: string[]; path: string; needs: string }[] {
  return ROUTES.map(([m, path, , guard]) => ({
    methods: Array.isArray(m) ? m : [m],
    path,
    needs: guard.needs,
  }));
}

/** The request handler, and `drain()`: resolves once every route in flight has answered (stop). */
export type ApiHandler = ((req: IncomingMessage, res: ServerResponse) => void) & { drain(): Promise<void> };

/**
 * `guard` (origin.ts) sees every request first: configured response headers, CORS preflight, and
 * the refusal of browser writes from origins that are not allowed. Then a body whose Content-Length
 * passes the limit (wire/body_limit.ts) is refused, whatever the route; then the router.
 */
export function createApiHandler(api: HttpEndpoints, log: Logger, guard?: OriginGuard): ApiHandler {
  const inFlight = new Set<Promise<void>>();
  const measure = requestRecorder(api.telemetry);
  const router = newRouter();
  for (const [method, path, route, guard] of ROUTES) {
    router.on(method, path, (req, res, params) => {
      measure(req, res, path);
      const p = runRoute({ req, res, params }, route, guard, api, log).finally(() => inFlight.delete(p));
      inFlight.add(p);
    });
  }
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    if (guard && !guard.admit(req, res)) return;
    const tooLarge = ownsBodyLimit(req) ? null : contentLengthRefusal(req);
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

/**
 * A router with no routes yet and its own answers, all coded errors: no route (ERR_NOT_FOUND 404,
 * or ERR_METHOD_NOT_ALLOWED 405 when another method has one), a malformed URL or a path segment
 * over 512 characters (ERR_VALIDATION 400 on `url`).
 */
function newRouter(): Router.Instance<Router.HTTPVersion.V1> {
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
  return router;
}

/**
 * Runs one route: its context (a signal that aborts when the client goes away, the leader view
 * for the headers), with ACLs on the caller's identity and the route's guard first (guards.ts),
 * then the route; any error answers as a coded error (an internal one is logged). Never rejects.
 */
function runRoute(
  matched: Pick<Ctx, "req" | "res" | "params">,
  route: Route,
  guard: Guard,
  api: HttpEndpoints,
  log: Logger,
): Promise<void> {
  const { req, res } = matched;
  const url = new URL(req.url ?? "/", "http://localhost");
  const ac = new AbortController();
  res.on("close", () => ac.abort());
  const ctx: Ctx = { ...matched, query: url.searchParams, signal: ac.signal };
  if (api.cluster) bindLeaderView(res, api.cluster);
  return Promise.resolve()
    .then(() => {
      const acls = api.acl as HttpEndpoints["acl"] | undefined;
      const resolves =
        typeof guard.resolvesToken === "function" ? guard.resolvesToken(api) : guard.resolvesToken !== false;
      if (acls?.enabled === true && resolves) {
        ctx.identity = acls.resolve(requestSecret(req.headers));
        guard.check(ctx, api);
      }
      return route(ctx, api);
    })
    .catch((err: unknown) => {
      const e = asBerthError(err);
      if (e.code === "ERR_INTERNAL")
        log.error("http request failed", { method: req.method, path: url.pathname, error: e.message });
      sendError(res, e);
    });
}
