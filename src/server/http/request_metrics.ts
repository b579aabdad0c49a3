/**
 * HTTP request latency by route *template* (`/v1/volume/csi/:id`, never the raw path: IDs would
 * make the label set unbounded), method and status code, measured from the moment the router
 * matched the request until its answer is finished (or the client went away):
 *
 *   berth.http.request.duration {method, route, code}   timer (Prometheus: …_duration_seconds)
 *
 * Time a request spent queued before the router (read_queue.ts) is not included.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Telemetry, TimerMetric } from "../../internal/metrics/telemetry.js";

type Recorder = (req: IncomingMessage, res: ServerResponse, route: string) => void;

const recorders = new WeakMap<Telemetry, Recorder>();

/** The recorder of `t`'s HTTP metric (one per agent); a no-op without telemetry. */
export function requestRecorder(t: Telemetry | undefined): Recorder {
  if (!t) return () => undefined;
  let rec = recorders.get(t);
  if (!rec) {
    const timer: TimerMetric<"method" | "route" | "code"> = t.timer(
      ["http", "request", "duration"],
      "Time HTTP API requests took, by method, route template and status code.",
      ["method", "route", "code"],
    );
    rec = (req, res, route) => {
      const started = performance.now();
      res.once("close", () =>
        timer.observe(
          { method: req.method ?? "", route, code: String(res.statusCode) },
          performance.now() - started,
        ),
      );
    };
    recorders.set(t, rec);
  }
  return rec;
}
