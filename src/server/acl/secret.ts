/**
 * The secret a request carries, as Nomad reads it (command/agent/http.go parseToken): the
 * `X-Nomad-Token` header, else `Authorization: Bearer <secret>`. Undefined: no token (anonymous).
 */
import type { IncomingHttpHeaders } from "node:http";

export function requestSecret(headers: IncomingHttpHeaders): string | undefined {
  const x = headers["x-nomad-token"];
  const token = (Array.isArray(x) ? x[0] : x)?.trim();
  if (token) return token;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? "");
  return m?.[1];
}
