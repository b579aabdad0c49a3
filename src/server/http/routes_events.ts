/**
 * `GET /v1/event/stream` (Nomad's command/agent/event_endpoint.go): `?topic=Topic:Key` (repeatable),
 * `?index=N` (events from index N on; the oldest held when N is older than the buffer),
 * `?namespace=` (default "default", `*` for all). Bad parameters answer 400 naming the parameter
 * before anything streams; then the answer is 200 and newline-delimited JSON until the client goes
 * away (server/events/stream.ts).
 */
import { BerthError, validationError } from "../../structs/errors.js";
import { requestSecret } from "../acl/secret.js";
import { authorizeTopics, streamNamespaces } from "../events/acl.js";
import { parseTopics } from "../events/topics.js";
import type { Route } from "../request_ctx.js";

function indexParam(raw: string | null): number {
  if (raw === null || raw === "") return 0;
  if (!/^\d+$/.test(raw)) {
    throw validationError(
      "index",
      `unable to parse ${JSON.stringify(raw)}: a non-negative integer is required`,
    );
  }
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw validationError("index", `${raw} is out of range`);
  return n;
}

export const eventStream: Route = async (ctx, api) => {
  const broker = api.events;
  if (!broker) throw new BerthError("ERR_INTERNAL", "the event broker is not running");
  const index = indexParam(ctx.query.get("index"));
  const topics = parseTopics(ctx.query.getAll("topic"));
  const namespaces = streamNamespaces(ctx, api);
  // Checked again whenever an ACL policy or token changes while the stream is open.
  const secret = requestSecret(ctx.req.headers);
  const authorize = () => {
    if (!api.acl.enabled) return;
    authorizeTopics(api.acl.resolve(secret).acl, namespaces, topics);
  };
  if (ctx.signal.aborted) return;
  await broker.stream(ctx.res, {
    topics,
    namespaces: new Set(namespaces),
    index,
    expiresAtMs: ctx.identity?.token?.ExpirationTime ?? 0,
    authorize,
  });
};
