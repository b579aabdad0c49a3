/**
 * The web UI's own writes through the browser perimeter (origin.ts). A browser sends `Origin` on
 * every write, same-origin ones included, so the UI's "Stop job" or "Detach" arrives with the
 * agent's own origin, which no operator lists in `Access-Control-Allow-Origin`. Such a request is
 * the page this agent served acting on itself: allowed, when it really is this agent's origin.
 *
 * "Really" is the catch: with DNS rebinding a hostile page at `http://evil.example:4646` gets that
 * name resolved to this agent, and its requests then carry a matching Origin and Host. A name can
 * be rebound; an IP literal cannot, and `localhost` resolves to loopback without DNS in browsers.
 * So a same-origin write is allowed only when the Host is an IP address or `localhost`; an agent
 * reached by DNS name allows its UI's writes through the configured allowlist, as any other origin
 * (http_api_response_headers { Access-Control-Allow-Origin = "https://berth.example:4646" }).
 */
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import type { TLSSocket } from "node:tls";

/** True when `origin` is the origin this request was sent to, at an address DNS cannot rebind. */
export function isUiSameOrigin(req: IncomingMessage, origin: string): boolean {
  const host = req.headers.host;
  if (typeof host !== "string" || host === "") return false;
  const scheme = (req.socket as Partial<TLSSocket> | undefined)?.encrypted === true ? "https" : "http";
  let self: URL;
  let from: URL;
  try {
    self = new URL(`${scheme}://${host}`);
    from = new URL(origin);
  } catch {
    return false;
  }
  // URL normalises case and default ports; an origin has no path, user or query to compare.
  if (from.origin !== self.origin || origin !== from.origin) return false;
  const name = self.hostname.replace(/^\[(.*)\]$/, "$1");
  return isIP(name) !== 0 || name === "localhost";
}
