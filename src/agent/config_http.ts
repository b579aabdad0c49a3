/**
 * The agent config's `http_api_response_headers` (Nomad's name and shape): headers the server adds
 * to every HTTP API answer.
 *
 *   http_api_response_headers = {
 *     "Access-Control-Allow-Origin" = "https://ui.example.com"
 *   }
 *
 * (a map attribute: berth's HCL 2 reader takes no quoted names in a block, which Nomad's HCL 1
 * examples use; in JSON it is the same object)
 *
 * Its `Access-Control-Allow-Origin` value is also the one browser origin berth lets write and open
 * WebSockets ("*" for any; see server/http/origin.ts): an operator who tells browsers an origin may
 * read the API has opted that origin in. Without it, every request carrying an `Origin` header is
 * refused for writes and upgrades. The value must be "*" or one origin (scheme://host[:port]), as
 * the CORS header itself allows; header names must be HTTP tokens and values a single line.
 */
import type { Body } from "../api/specs/body.js";

export interface HttpApiSetting {
  responseHeaders: Record<string, string>;
  allowedOrigins: string[];
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ALLOW_ORIGIN = "access-control-allow-origin";

/** Reads the block at `top`; undefined when the file has none. */
export function parseHttpApiResponseHeaders(top: Body): HttpApiSetting | undefined {
  const headers = top.stringMap("http_api_response_headers");
  if (headers === undefined) return undefined;
  const out: HttpApiSetting = { responseHeaders: {}, allowedOrigins: [] };
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name)) {
      throw top.error(`http_api_response_headers: ${JSON.stringify(name)} is not a valid header name`);
    }
    if (/[\r\n\0]/.test(value)) {
      throw top.error(`http_api_response_headers: the value of ${name} must be one line`);
    }
    out.responseHeaders[name] = value;
    if (name.toLowerCase() === ALLOW_ORIGIN) out.allowedOrigins = [checkOrigin(top, value)];
  }
  return out;
}

/** Later files win per header; the allowed origin follows the winning Access-Control-Allow-Origin. */
export function mergeHttpApi(a: HttpApiSetting | undefined, b: HttpApiSetting): HttpApiSetting {
  if (!a) return b;
  const responseHeaders = { ...a.responseHeaders };
  for (const [k, v] of Object.entries(b.responseHeaders)) {
    for (const old of Object.keys(responseHeaders))
      if (old.toLowerCase() === k.toLowerCase()) delete responseHeaders[old];
    responseHeaders[k] = v;
  }
  return {
    responseHeaders,
    allowedOrigins: b.allowedOrigins.length > 0 ? b.allowedOrigins : a.allowedOrigins,
  };
}

function checkOrigin(top: Body, value: string): string {
  const v = value.trim();
  if (v === "*") return v;
  let url: URL | undefined;
  try {
    url = new URL(v);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || url.origin !== v.toLowerCase()) {
    throw top.error(
      `http_api_response_headers: Access-Control-Allow-Origin must be "*" or one origin like ` +
        `"https://ui.example.com:8080" (scheme, host and port only), got ${JSON.stringify(value)}`,
    );
  }
  return url.origin;
}
