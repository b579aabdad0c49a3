/**
 * Whole requests over every /v1 route: a valid-ish body from arb_bodies.ts put through the
 * mutations of arb_mutate.ts, odd path IDs, and query parameters (namespace, index/wait,
 * per_page/next_token, prefix, plugin_id, purge/force/all, node) that are sometimes right and
 * sometimes not. A numeric `index` always comes with a short `wait` (or a bad one): an index
 * ahead of the store is a legitimate blocking query and would otherwise wait Nomad's 5 minutes.
 */
import fc from "fast-check";
import type { RawRequest } from "./harness.js";
import { NODES, PLUGIN } from "./harness.js";
import {
  drainBody,
  eligibilityBody,
  job,
  jobId,
  nodeId,
  snapshotBody,
  volumeId,
  volumeSpec,
} from "./arb_bodies.js";
import { applyMutations, mutation, oddString, onWire, wire } from "./arb_mutate.js";

type Query = Record<string, string>;

/** A path segment: usually a pooled ID, sometimes an odd string, always encoded as a client would. */
function segment(pool: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof({ weight: 4, arbitrary: pool }, { weight: 1, arbitrary: oddString }).map(encodeSegment);
}

/** encodeURIComponent, except a lone surrogate goes out as its (invalid) UTF-8 bytes, not a throw. */
function encodeSegment(s: string): string {
  return Array.from(s, (ch) => {
    try {
      return encodeURIComponent(ch);
    } catch {
      return "%ED%A0%80";
    }
  }).join("");
}

const flag = fc.constantFrom("true", "false", "1", "0", "", "yes", "TRUE", "\u0000");
const namespaceParam = fc.constantFrom("default", "*", "fz-ns", "", "../x", "a".repeat(300), "\u001b[2J");
const blocking = fc.oneof(
  fc.record({
    index: fc.oneof(fc.nat({ max: 5 }).map(String), fc.constantFrom("1000000", "9007199254740993", "1e300")),
    // No zero wait: as Nomad's, "0s" means the default 5 minutes (respond.ts blockingWaitMs).
    wait: fc.constantFrom(
      "1ms",
      "2ms",
      "0.1ms",
      "0.001s",
      "1.5ms",
      "0.2ms",
      "abc",
      "-1s",
      "1e3ms",
      "5x",
      "ms",
    ),
  }),
  fc.record({ index: fc.constantFrom("-1", "1.5", "abc", "", "0x10", "NaN", "Infinity") }),
);
const paging = fc.record(
  {
    per_page: fc.constantFrom("0", "1", "10", "-1", "1.5", "1e300", "2147483648", "abc", ""),
    next_token: fc.oneof(fc.constantFrom("", "t1", "bogus"), oddString),
  },
  { requiredKeys: [] },
);

function query(extra: fc.Arbitrary<Query> = fc.constant({})): fc.Arbitrary<Query> {
  return fc
    .tuple(
      fc.record({ namespace: namespaceParam }, { requiredKeys: [] }),
      fc.option(blocking, { freq: 3 }),
      extra,
    )
    .map(([ns, b, e]) => ({ ...ns, ...(b ?? {}), ...e }));
}

function url(path: string, q: Query): string {
  const s = new URLSearchParams(q).toString();
  return s === "" ? path : `${path}?${s}`;
}

/** A body request: the valid-ish body, mutated 0–3 times, sent the `wire` way. */
function bodyRequest(
  method: fc.Arbitrary<string>,
  path: fc.Arbitrary<string>,
  body: fc.Arbitrary<unknown>,
  q: fc.Arbitrary<Query> = query(),
): fc.Arbitrary<RawRequest> {
  return fc
    .record({
      method,
      path,
      body,
      muts: fc.array(mutation, { maxLength: 3 }),
      wire,
      q,
    })
    .map(({ method: m, path: p, body: b, muts, wire: w, q: qs }) => {
      const { body: text, headers } = onWire(applyMutations(b, muts), w);
      return { method: m, url: url(p, qs), headers, body: text };
    });
}

const put = fc.constantFrom("PUT", "POST");

const jobRegister = bodyRequest(
  put,
  fc.constant("/v1/jobs"),
  job.map((j) => ({ Job: j })),
);

/** Volume register/create: the URL names the first volume (or an odd ID). */
function volumeWrite(suffix: string): fc.Arbitrary<RawRequest> {
  return fc
    .tuple(fc.array(volumeSpec, { minLength: 1, maxLength: 2 }), fc.option(segment(volumeId), { freq: 4 }))
    .chain(([vols, odd]) =>
      bodyRequest(
        put,
        fc.constant(`/v1/volume/csi/${odd ?? encodeSegment(vols[0]?.ID ?? "")}${suffix}`),
        fc.constant({ Volumes: vols }),
      ),
    );
}

const nodeSeg = segment(nodeId);
const drain = bodyRequest(
  put,
  nodeSeg.map((n) => `/v1/node/${n}/drain`),
  drainBody,
);
const eligibility = bodyRequest(
  put,
  nodeSeg.map((n) => `/v1/node/${n}/eligibility`),
  eligibilityBody,
);
const snapshotCreate = bodyRequest(put, fc.constant("/v1/volumes/snapshot"), snapshotBody);

const secretsHeader = fc.option(fc.constantFrom("a=b", "a=b,c=d", "novalue", "=x", ",", "k==v", " = "), {
  freq: 3,
});

function simple(
  method: string,
  path: fc.Arbitrary<string>,
  q: fc.Arbitrary<Query> = query(),
): fc.Arbitrary<RawRequest> {
  return fc.record({ path, q, secrets: secretsHeader }).map(({ path: p, q: qs, secrets }): RawRequest => ({
    method,
    url: url(p, qs),
    headers: secrets === null ? {} : { "X-Nomad-CSI-Secrets": secrets },
  }));
}

const pluginParam = fc.record(
  { plugin_id: fc.oneof(fc.constantFrom(PLUGIN, PLUGIN, "fz-missing", ""), oddString) },
  { requiredKeys: [] },
);
const jobSeg = segment(jobId);
const volSeg = segment(volumeId);
const anyId = segment(fc.constantFrom("fz-x", "00000000-0000-0000-0000-000000000000"));

const deletes = fc.oneof(
  simple(
    "DELETE",
    jobSeg.map((j) => `/v1/job/${j}`),
    query(fc.record({ purge: flag }, { requiredKeys: [] })),
  ),
  simple(
    "DELETE",
    volSeg.map((v) => `/v1/volume/csi/${v}`),
    query(fc.record({ force: flag }, { requiredKeys: [] })),
  ),
  simple(
    "DELETE",
    volSeg.map((v) => `/v1/volume/csi/${v}/delete`),
  ),
  simple(
    "DELETE",
    volSeg.map((v) => `/v1/volume/csi/${v}/detach`),
    query(fc.record({ node: fc.oneof(fc.constantFrom(...NODES), oddString) }, { requiredKeys: [] })),
  ),
  simple(
    "DELETE",
    fc.constant("/v1/volumes/snapshot"),
    query(
      fc
        .tuple(
          pluginParam,
          fc.record(
            { snapshot_id: fc.oneof(fc.constantFrom("snap-1", ""), oddString) },
            { requiredKeys: [] },
          ),
        )
        .map(([a, b]) => ({ ...a, ...b })),
    ),
  ),
);

const listQuery = query(
  fc
    .record(
      {
        prefix: fc.oneof(fc.constantFrom("fz", ""), oddString),
        type: fc.constantFrom("csi", "host", ""),
        plugin_id: fc.constantFrom(PLUGIN, "x"),
        job: fc.constantFrom("fz-j1", ""),
        status: fc.constantFrom("blocked", "complete", "?"),
        all: flag,
      },
      { requiredKeys: [] },
    )
    .map((q) => q as Query),
);

const reads = fc.oneof(
  simple(
    "GET",
    fc.constantFrom(
      "/v1/jobs",
      "/v1/allocations",
      "/v1/nodes",
      "/v1/volumes",
      "/v1/plugins",
      "/v1/evaluations",
    ),
    listQuery,
  ),
  simple(
    "GET",
    fc.constantFrom("/v1/volumes/snapshot", "/v1/volumes/external"),
    query(fc.tuple(pluginParam, paging).map(([a, b]) => ({ ...a, ...b }))),
  ),
  simple(
    "GET",
    fc.oneof(
      jobSeg.map((j) => `/v1/job/${j}`),
      jobSeg.map((j) => `/v1/job/${j}/allocations`),
      jobSeg.map((j) => `/v1/job/${j}/evaluations`),
      nodeSeg.map((n) => `/v1/node/${n}`),
      nodeSeg.map((n) => `/v1/node/${n}/allocations`),
      volSeg.map((v) => `/v1/volume/csi/${v}`),
      segment(fc.constantFrom(PLUGIN)).map((p) => `/v1/plugin/csi/${p}`),
      anyId.map((a) => `/v1/allocation/${a}`),
      anyId.map((a) => `/v1/evaluation/${a}`),
      anyId.map((a) => `/v1/evaluation/${a}/allocations`),
    ),
    listQuery,
  ),
);

/** Paths no route expects: malformed escapes, doubled slashes, wrong methods. */
const oddRoutes = fc.record({
  method: fc.constantFrom("GET", "PUT", "DELETE", "PATCH", "OPTIONS"),
  url: fc.constantFrom(
    "/v1/job/%",
    "/v1/job/%E0%A4%A",
    "/v1//jobs",
    "/v1/jobs/",
    "/v1/job/a%2F..%2F..%2Fetc",
    "/v1/volume/csi/",
    "/v1/node/%00/drain",
    "/v1/jobs?index=1&index=2&wait=1ms",
    "/v1/volumes?type=csi&type=host",
    "/v1/plugin/csi/" + "a".repeat(600),
    "/v2/jobs",
    "/",
  ),
  headers: fc.constant({}),
});

/** Every request the suite sends, weighted toward the writes (where state can go wrong). */
export const request: fc.Arbitrary<RawRequest> = fc
  .oneof(
    { weight: 6, arbitrary: jobRegister },
    { weight: 4, arbitrary: volumeWrite("") },
    { weight: 3, arbitrary: volumeWrite("/create") },
    { weight: 2, arbitrary: drain },
    { weight: 1, arbitrary: eligibility },
    { weight: 2, arbitrary: snapshotCreate },
    { weight: 3, arbitrary: deletes },
    { weight: 3, arbitrary: reads },
    { weight: 1, arbitrary: oddRoutes },
  )
  // Counterexamples print as a short request line, not a 20,000-bracket body.
  .map((r) => Object.assign(r, { [fc.toStringMethod]: () => showRequest(r) }));

/** A request on one line, long bodies and URLs cut. */
export function showRequest(r: RawRequest): string {
  const body =
    r.body === undefined
      ? ""
      : ` body=${JSON.stringify(r.body.length > 600 ? r.body.slice(0, 300) + "…" + r.body.slice(-300) : r.body)}`;
  return `${r.method} ${r.url.slice(0, 300)} ${JSON.stringify(r.headers)}${body}`;
}
