/**
 * Who may stream which topics, as Nomad's Event.Stream (nomad/event_endpoint.go validateNsOp): the
 * token must allow every topic asked for, in every namespace the stream covers (`*`: each that
 * exists), else the request is refused with 403 before anything streams. Per topic:
 *
 * - Job, Allocation, Evaluation, Deployment, Service, CSIPlugin: namespace `read-job`
 * - CSIVolume: namespace `csi-read-volume`; HostVolume: namespace `host-volume-read`
 * - Node: node `read`; Operator: operator `read`
 * - `*` and every other topic (ACL, NodePool, Variable): a management token.
 *
 * The same check runs again whenever an ACL policy or token changes while a stream is open (the
 * broker asks each stream): a stream its token no longer allows is closed, as Nomad closes it.
 */
import type { Acl } from "../../structs/acl.js";
import { checkId } from "../../structs/ids.js";
import { permissionDenied } from "../acl/endpoint.js";
import type { Guard } from "../acl/guards.js";
import type { Ctx, HttpEndpoints } from "../request_ctx.js";
import { parseTopics, type TopicKeys } from "./topics.js";

const READ_JOB_TOPICS = new Set(["Job", "Allocation", "Evaluation", "Deployment", "Service", "CSIPlugin"]);

function allowsTopic(acl: Acl, ns: string, topic: string): boolean {
  if (READ_JOB_TOPICS.has(topic)) return acl.allowNamespaceAnyOf(ns, "read-job");
  if (topic === "CSIVolume") return acl.allowNamespaceAnyOf(ns, "csi-read-volume");
  if (topic === "HostVolume") return acl.allowNamespaceAnyOf(ns, "host-volume-read");
  if (topic === "Node") return acl.allowNodeRead();
  if (topic === "Operator") return acl.allowOperatorRead();
  return acl.isManagement();
}

/** Throws 403 unless `acl` allows every topic in every namespace. */
export function authorizeTopics(acl: Acl, namespaces: Iterable<string>, topics: TopicKeys): void {
  for (const ns of namespaces) {
    for (const topic of topics.keys()) {
      if (!allowsTopic(acl, ns, topic)) throw permissionDenied();
    }
  }
}

/** The namespaces a stream covers: `?namespace=` (default "default"); `*` every one that exists. */
export function streamNamespaces(ctx: Ctx, api: HttpEndpoints): string[] {
  const ns = ctx.query.get("namespace") || "default";
  return ns === "*" ? api.store.listNamespaces().map((n) => n.Name) : [checkId("namespace", ns)];
}

/** The route's guard (http/api.ts ROUTES): topics are checked as above, bad ones answer 400 first. */
export const EVENT_STREAM_GUARD: Guard = {
  needs:
    "per topic: namespace read-job (CSIVolume: csi-read-volume), Node: node read, all topics: management",
  check(ctx, api) {
    const acl = ctx.identity?.acl;
    if (acl === undefined) return;
    authorizeTopics(acl, streamNamespaces(ctx, api), parseTopics(ctx.query.getAll("topic")));
  },
};
