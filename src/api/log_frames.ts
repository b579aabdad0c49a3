/**
 * A task's log as Nomad's stream frames (`GET /v1/client/fs/logs/:id` without `plain`): JSON
 * objects `{"Offset", "Data" (base64), "File"}` one after the other, where Offset is the file offset
 * just past the frame's data. What `alloc logs -tail -f` needs: it reads the tail, then follows from
 * exactly where that read ended, so nothing written in between is lost.
 */
import type { ApiClient } from "./client.js";
import { streamGet } from "./stream_get.js";
import type { LogQuery } from "./alloc_stream.js";

export interface LogFrame {
  /** The file offset just past `data`. */
  offset: number;
  data: Buffer;
  file: string;
}

/** The log's frames as the server sends them (a frame split across chunks is yielded once whole). */
export async function* streamLogFrames(
  api: ApiClient,
  allocId: string,
  q: LogQuery,
): AsyncGenerator<LogFrame> {
  const { url, headers } = api.transport.endpoint(`/v1/client/fs/logs/${encodeURIComponent(allocId)}`, {
    task: q.task,
    type: q.type,
    follow: q.follow ? "true" : undefined,
    offset: q.offset === undefined ? undefined : String(q.offset),
    origin: q.origin,
  });
  const splitter = new JsonObjectSplitter();
  for await (const chunk of streamGet(api, { url, headers }, q.signal)) {
    for (const text of splitter.push(chunk)) yield toFrame(text);
  }
  if (splitter.rest().trim() !== "") throw new Error("the log stream ended inside a frame");
}

function toFrame(text: string): LogFrame {
  const v = JSON.parse(text) as { Offset?: unknown; Data?: unknown; File?: unknown };
  if (typeof v.Offset !== "number" || (v.Data !== undefined && typeof v.Data !== "string")) {
    throw new Error(`unexpected log frame: ${text.slice(0, 80)}`);
  }
  return {
    offset: v.Offset,
    data: Buffer.from(typeof v.Data === "string" ? v.Data : "", "base64"),
    file: typeof v.File === "string" ? v.File : "",
  };
}

/** Splits a byte stream of JSON objects written back to back into each object's text. */
export class JsonObjectSplitter {
  private readonly decoder = new TextDecoder();
  private buf = "";
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Where the scan of `buf` resumes. */
  private scanned = 0;

  push(chunk: Uint8Array): string[] {
    this.buf += this.decoder.decode(chunk, { stream: true });
    const out: string[] = [];
    let start = 0;
    for (let i = this.scanned; i < this.buf.length; i++) {
      const c = this.buf[i]!;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === "\\") this.escaped = true;
        else if (c === '"') this.inString = false;
      } else if (c === '"') this.inString = true;
      else if (c === "{") {
        if (this.depth === 0) start = i;
        this.depth++;
      } else if (c === "}") {
        this.depth--;
        if (this.depth === 0) {
          out.push(this.buf.slice(start, i + 1));
          this.buf = this.buf.slice(i + 1);
          i = -1;
          start = 0;
        }
      }
      this.scanned = i + 1;
    }
    return out;
  }

  /** What is left that is not a whole object yet. */
  rest(): string {
    return this.buf;
  }
}
