/**
 * What each HTTP route requires of the caller's ACL token: the column of the router's ROUTES table
 * (http/api.ts), so no route exists without one. Each guard names what it checks (the README's
 * route table is checked against these names by a test) and checks it before the route runs, with
 * Nomad's rules (nomad/*_endpoint.go):
 *
 * - `ns(...ops)`: any of `ops` in the request's namespace (`?namespace=`, default "default"); for
 *   `*` (lists over every namespace) some namespace must allow it, and the list is filtered
 *   (nsFilter) to the namespaces that do.
 * - `objectNs(kind, ...ops)`: any of `ops` in the namespace of the alloc, eval or deployment the
 *   URL names (a missing one answers the route's own 404, as Nomad's endpoints do).
 * - `node`, `agent`, `operator`, `plugin`: the level of those rules.
 * - `body(...)`: the route reads the namespace from the body and checks it there (authorize.ts),
 *   as job and volume writes must: checking the URL's namespace only is CVE-2024-10975.
 * - `own(...)`: ACL routes, whose endpoint decides (management, the token itself, or nobody).
 *
 * With ACLs off nothing is checked: ctx.identity is undefined.
 */
import type { Acl } from "../../structs/acl.js";
import type { Ctx, HttpEndpoints } from "../request_ctx.js";
import { permissionDenied } from "./endpoint.js";

export interface Guard {
  /** What the route requires, as the README's table shows it. */
  readonly needs: string;
  check(ctx: Ctx, api: HttpEndpoints): void;
  /**
   * false: the route runs without resolving the request's token (the bootstrap ignores it); a
   * function: whether to, by the agent's settings (the metrics route).
   */
  readonly resolvesToken?: false | ((api: HttpEndpoints) => boolean);
}

/** What lists of CSI volumes need in a namespace (Nomad's CSIVolume.List): any of these. */
export const CSI_LIST_OPS = ["csi-list-volume", "csi-read-volume", "csi-mount-volume", "list-jobs"];

/** The caller's ACL; undefined when ACLs are off. */
export function aclOf(ctx: Ctx): Acl | undefined {
  return ctx.identity?.acl;
}

/** The request's namespace as the ACL sees it: `*` stays `*`. */
function requestNs(ctx: Ctx): string {
  return ctx.query.get("namespace") || "default";
}

/** Any of `ops` in `ns` (always with ACLs off). */
export function allowNs(ctx: Ctx, ns: string, ...ops: string[]): boolean {
  const acl = aclOf(ctx);
  return acl === undefined || acl.allowNamespaceAnyOf(ns, ...ops);
}

export function requireNs(ctx: Ctx, ns: string, ...ops: string[]): void {
  if (!allowNs(ctx, ns, ...ops)) throw permissionDenied();
}

export function requirePluginRead(ctx: Ctx): void {
  const acl = aclOf(ctx);
  if (acl !== undefined && !acl.allowPluginRead()) throw permissionDenied();
}

/**
 * For a list over every namespace: keeps the records of the namespaces where the caller may do
 * any of `ops`, and `key`, the part of a cached list's key that names what the filtering depends
 * on (empty when the caller sees everything, so those answers keep sharing one cache entry): a
 * client token's ACL is compiled from its policy set alone (AclEndpoint.resolve; anonymous is the
 * policy "anonymous"), so the key is that set and the policies' table index — every token with the
 * same policies shares one answer, and a policy edited or a token given other policies is another.
 */
export function nsFilter(
  ctx: Ctx,
  api: HttpEndpoints,
  ...ops: string[]
): { keep(ns: string): boolean; key: string } {
  const acl = aclOf(ctx);
  if (acl === undefined || acl.isManagement()) return { keep: () => true, key: "" };
  const policies = [...(ctx.identity?.token?.Policies ?? ["anonymous"])].sort();
  const key = `|acl:${JSON.stringify(policies)}:${api.store.tableIndex("acl_policies")}`;
  return { keep: (ns) => acl.allowNamespaceAnyOf(ns, ...ops), key };
}

export function ns(...ops: string[]): Guard {
  return {
    needs: `namespace: ${ops.join(" | ")}`,
    check(ctx) {
      requireNs(ctx, requestNs(ctx), ...ops);
    },
  };
}

/** `ns(...)` and the plugin `read` level (Nomad's volume writes and snapshot calls). */
export function nsAndPluginRead(...ops: string[]): Guard {
  return {
    needs: `namespace: ${ops.join(" | ")}; plugin: read`,
    check(ctx) {
      requireNs(ctx, requestNs(ctx), ...ops);
      requirePluginRead(ctx);
    },
  };
}

type ObjectKind = "alloc" | "eval" | "deployment";

function namespaceOfObject(kind: ObjectKind, id: string, api: HttpEndpoints): string | undefined {
  if (kind === "alloc") return api.store.getAlloc(id)?.Namespace;
  if (kind === "eval") return api.store.getEval(id)?.Namespace;
  return api.store.getDeployment(id)?.Namespace;
}

export function objectNs(kind: ObjectKind, ...ops: string[]): Guard {
  return {
    needs: `namespace of the ${kind}: ${ops.join(" | ")}`,
    check(ctx, api) {
      const id = ctx.params.id ?? "";
      const ns = namespaceOfObject(kind, id, api);
      if (ns !== undefined) requireNs(ctx, ns, ...ops);
    },
  };
}

type Level = "read" | "write";

function level(rule: string, lvl: string, allowed: (acl: Acl) => boolean): Guard {
  return {
    needs: `${rule}: ${lvl}`,
    check(ctx) {
      const acl = aclOf(ctx);
      if (acl !== undefined && !allowed(acl)) throw permissionDenied();
    },
  };
}

export function node(lvl: Level): Guard {
  return level("node", lvl, (a) => (lvl === "read" ? a.allowNodeRead() : a.allowNodeWrite()));
}
export function agent(lvl: "read"): Guard {
  return level("agent", lvl, (a) => a.allowAgentRead());
}
export function operator(lvl: Level): Guard {
  return level("operator", lvl, (a) => (lvl === "read" ? a.allowOperatorRead() : a.allowOperatorWrite()));
}
export function plugin(lvl: "read" | "list"): Guard {
  return level("plugin", lvl, (a) => (lvl === "read" ? a.allowPluginRead() : a.allowPluginList()));
}

/**
 * The route checks the namespaces its body names (authorize.ts); `needs` says what. Before the
 * body is read, a caller allowed none of `ops` in any namespace is refused at once.
 */
export function body(needs: string, ...ops: string[]): Guard {
  return {
    needs,
    check(ctx) {
      requireNs(ctx, "*", ...ops);
    },
  };
}

/**
 * `/v1/search`: the route filters by context (routes_search.ts); a caller who may read no context
 * at all (no node read, no plugin list, none of the namespace reads anywhere) is refused before its
 * body is read, as Nomad's sufficientSearchPerms.
 */
export const SEARCH: Guard = {
  needs: "per context: namespace read-job (volumes: csi-list-volume), node: read, plugin: list",
  check(ctx) {
    const acl = aclOf(ctx);
    if (acl === undefined || acl.allowNodeRead() || acl.allowPluginList()) return;
    requireNs(ctx, "*", "read-job", "list-jobs", ...CSI_LIST_OPS);
  },
};

/** ACL routes: the endpoint decides (endpoint.ts); `needs` says what. */
export function own(needs: string): Guard {
  return { needs, check: () => undefined };
}

/** `GET /v1/volumes`: `?type=host` lists host volumes, anything else CSI volumes. */
export const VOLUME_LIST: Guard = {
  needs:
    "namespace: csi-list-volume | csi-read-volume | csi-mount-volume | list-jobs (type=host: host-volume-read)",
  check(ctx) {
    if (ctx.query.get("type") === "host") requireNs(ctx, requestNs(ctx), "host-volume-read");
    else
      requireNs(ctx, requestNs(ctx), "csi-list-volume", "csi-read-volume", "csi-mount-volume", "list-jobs");
  },
};

/** `/v1/acl/bootstrap`: open to anyone, once; a token sent along is ignored, as Nomad ignores it. */
export const BOOTSTRAP: Guard = { needs: "none (once)", check: () => undefined, resolvesToken: false };

/** `DELETE /v1/job/:id`: Nomad's Job.Deregister; deregister-job does not allow a purge. */
export const JOB_DEREGISTER: Guard = {
  needs: "namespace: submit-job | purge-job | deregister-job (not with ?purge=true)",
  check(ctx) {
    const purge = ctx.query.get("purge") === "true" || ctx.query.get("purge") === "1";
    const ops = ["submit-job", "purge-job", ...(purge ? [] : ["deregister-job"])];
    requireNs(ctx, requestNs(ctx), ...ops);
  },
};

/** Namespace writes and deletes: a management token (Nomad's Namespace.Upsert/DeleteNamespaces). */
export const MANAGEMENT: Guard = {
  needs: "management",
  check(ctx) {
    const acl = aclOf(ctx);
    if (acl !== undefined && !acl.isManagement()) throw permissionDenied();
  },
};

/** `GET /v1/namespaces`: any caller; the list keeps the namespaces it may use (routes_namespaces). */
export const NAMESPACE_LIST: Guard = {
  needs: "any token (lists the namespaces it may use)",
  check: () => undefined,
};

/** `GET /v1/namespace/:name`: any operation allowed in that namespace (Nomad's AllowNamespace). */
export const NAMESPACE_READ: Guard = {
  needs: "any capability in the namespace",
  check(ctx) {
    const acl = aclOf(ctx);
    if (acl !== undefined && !acl.allowNamespace(ctx.params.name ?? "")) throw permissionDenied();
  },
};
