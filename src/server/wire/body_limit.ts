/**
 * The request body limit of every HTTP API route. Nomad's HTTP server reads bodies without a cap
 * (its one size knob, `job_max_source_size`, 1 MB by default, only bounds the job source it keeps);
 * berth bounds every body so one request cannot make the server buffer without end. 8 MiB is well
 * above the largest legitimate body (a job with its 1 MB source and its JSON, a volume spec list).
 *
 * A body over the limit is refused with 413 and ERR_REQUEST_TOO_LARGE naming the limit, before the
 * route changes anything: at once when Content-Length announces it (checked for every route, even
 * those that read no body), else while readJson reads it (a chunked body).
 */
import type { IncomingMessage } from "node:http";
import { BerthError } from "../../structs/errors.js";

export const MAX_BODY_BYTES = 8 * 1024 * 1024;

/**
 * The request line and headers together (Node's default, set explicitly so a `--max-http-header-size`
 * flag cannot raise it): past it Node answers 431 Request Header Fields Too Large and closes.
 * Nomad's Go server allows 1 MB; berth's largest header, X-Nomad-CSI-Secrets, fits well within this.
 */
export const MAX_HEADER_BYTES = 16 * 1024;

export function bodyTooLarge(): BerthError {
  return new BerthError(
    "ERR_REQUEST_TOO_LARGE",
    `request body is larger than the limit of ${MAX_BODY_BYTES} bytes (8 MiB)`,
    { field: "body" },
  );
}

/** The refusal of a request whose Content-Length passes the limit, or null. */
export function contentLengthRefusal(req: IncomingMessage): BerthError | null {
  const raw = req.headers["content-length"];
  if (raw === undefined) return null;
  // Node has already refused a malformed Content-Length (400) before a route sees the request.
  return Number(raw) > MAX_BODY_BYTES ? bodyTooLarge() : null;
}

/**
 * Reads the whole body, refusing it (bodyTooLarge) as soon as it passes the limit. The rest of an
 * oversized body is read and dropped rather than the stream destroyed (destroying a request
 * destroys its socket, and the 413 would never reach the client); the listener's request timeout
 * bounds how long the dropping lasts.
 */
export function readBodyLimited(req: IncomingMessage): Promise<Buffer> {
  // A body already read to its end has nothing more to give (and will not emit "end" again).
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) {
        chunks.push(chunk);
        return;
      }
      done();
      req.resume();
      reject(bodyTooLarge());
    };
    const onEnd = () => {
      done();
      resolve(Buffer.concat(chunks));
    };
    const onError = (err: Error) => {
      done();
      reject(err);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}
