/**
 * A GET whose answer is a byte stream (logs, frames, files): sent through the client's transport
 * (https with its TLS settings, as every other request of it), a non-2xx answer thrown as the
 * ApiError the JSON routes throw, the body yielded chunk by chunk. An abort through `signal` ends
 * the stream quietly, before or during the body.
 */
import type { ApiClient } from "./client.js";
import { ApiError, ConnectionError, ERROR_CODE_HEADER } from "./errors.js";

export async function* streamGet(
  api: ApiClient,
  at: { url: URL; headers: Record<string, string> },
  signal: AbortSignal | undefined,
): AsyncGenerator<Uint8Array> {
  let res: Response;
  try {
    res = await api.transport.send(at.url, { headers: at.headers, signal });
  } catch (err) {
    if (isAbort(err)) return;
    throw new ConnectionError(api.address, err);
  }
  if (!res.ok) {
    const text = (await res.text()).trim();
    throw new ApiError(res.status, text || res.statusText, res.headers.get(ERROR_CODE_HEADER) ?? undefined);
  }
  if (!res.body) return;
  try {
    for await (const chunk of res.body) yield chunk;
  } catch (err) {
    if (!isAbort(err)) throw err;
  }
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && err.name === "AbortError";
}
