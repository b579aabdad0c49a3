/**
 * The plain HTTP wire every listener of a server speaks, the API routes and the server-to-server
 * calls (leader/forward.ts, leader/scheduler_forward.ts) alike: coded errors → status codes
 * (status_map.ts) with the code in X-Berth-Error-Code, plain-text errors (never a stack), and JSON
 * request bodies read under the size cap (body_limit.ts).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { asBerthError, validationError } from "../../structs/errors.js";
import { jsonNestingDepth, MAX_JSON_DEPTH } from "../../structs/json_check.js";
import { statusOf } from "./status_map.js";
import { readBodyLimited } from "./body_limit.js";

/** The header that carries an error's stable code, so clients branch on it, never on the text. */
export const ERROR_CODE_HEADER = "X-Berth-Error-Code";

export function sendError(res: ServerResponse, err: unknown): void {
  const e = asBerthError(err);
  if (!res.headersSent) res.setHeader(ERROR_CODE_HEADER, e.code);
  sendText(res, statusOf(e.code), e.message);
}

export function sendText(res: ServerResponse, status: number, text: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8" });
  res.end(text.endsWith("\n") ? text : text + "\n");
}

/**
 * Reads and parses a JSON body. An empty body reads as `{}`; bad JSON, and JSON nested deeper than
 * MAX_JSON_DEPTH (refused before it is parsed), is a 400 naming the problem; a body over
 * MAX_BODY_BYTES is a 413 (body_limit.ts), refused as soon as it passes the limit.
 */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const body = await readBodyLimited(req);
  const text = body.toString("utf8").trim();
  if (text === "") return {};
  if (jsonNestingDepth(text) > MAX_JSON_DEPTH)
    throw validationError("body", `nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw validationError("body", `invalid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}
