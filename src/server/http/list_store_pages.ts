/**
 * Lists paged at the store (issue 13): `per_page`, `next_token`, `prefix` and `reverse` on the
 * volume, job and node lists walk the store's primary-key index in runs (StateStore.volumeRange,
 * jobRange, nodeRange) and stop one item past the page, so `GET /v1/volumes?type=csi&per_page=100`
 * reads about a hundred volumes whatever the table holds, instead of loading, parsing and sorting
 * all of them.
 *
 * Contract: the answer is exactly pageOf's (list_options.ts) over the whole list — same items,
 * same order, same next token, same filter errors. A namespaced list's token is "Namespace.ID"
 * compared as a string; namespaces hold no "." (a namespace's name never does,
 * structs/namespace.ts), so that order is namespace by namespace (ordered by "Namespace.") and by
 * ID within each, which is what the index gives. Should a stored namespace hold a "." after all,
 * these answer undefined and the caller pages the whole list as before. `filter` is evaluated on
 * each visited item's stub and non-matching items do not count, as Nomad's paginator applies
 * filters before paging.
 */
import { denormalizeVolume, type CSIVolume } from "../../structs/volume.js";
import type { CSIPlugin } from "../../structs/plugin.js";
import type { Job } from "../../structs/job.js";
import type { Node } from "../../structs/node.js";
import type { RecordRange, StateStore } from "../state/store.js";
import { filterMatches, type ListOptions } from "./list_options.js";

/** Records read per run: a page and one more when paging, bounded either way. */
const MIN_RUN = 32;
const MAX_RUN = 1000;

type Page<S> = { items: S[]; nextToken: string };

interface Source<R> {
  /** The namespaces to walk (undefined: the list has none and its token is the ID). */
  namespaces: string[] | undefined;
  range(q: RecordRange): R[];
}

/**
 * Where a namespace's records start under `token` ("" = all of them), or null when none of them
 * is on the token's side. `head` is "ns." (its tokens are head + ID), or "" for a list without
 * namespaces.
 */
function startIn(head: string, token: string, reverse: boolean): string | null {
  if (token === "") return "";
  if (token.startsWith(head)) {
    const id = token.slice(head.length);
    // Reversed, the token "ns." itself is below every "ns.ID": nothing of ns is on its side.
    return id === "" && reverse ? null : id;
  }
  // Every "ns.ID" is above a token below "ns." and below a token above it (it does not start so).
  return token < head !== reverse ? "" : null;
}

function pageFromSource<R extends { ID: string }, S>(
  o: ListOptions,
  src: Source<R>,
  keep: (r: R) => boolean,
  stub: (r: R) => S,
): Page<S> | undefined {
  if (src.namespaces?.some((ns) => ns.includes("."))) return undefined;
  const heads = (src.namespaces ?? [undefined]).map((ns) => ({ ns, head: ns === undefined ? "" : `${ns}.` }));
  heads.sort((a, b) => (a.head < b.head ? -1 : a.head > b.head ? 1 : 0));
  if (o.reverse) heads.reverse();
  const run = o.perPage > 0 ? Math.min(Math.max(o.perPage + 1, MIN_RUN), MAX_RUN) : MAX_RUN;
  const items: S[] = [];
  for (const { ns, head } of heads) {
    let from = startIn(head, o.nextToken, o.reverse);
    if (from === null) continue;
    let skip: string | undefined;
    for (;;) {
      const rows = src.range({
        namespace: ns,
        from,
        reverse: o.reverse,
        prefix: o.prefix,
        limit: run,
      });
      for (const r of rows) {
        // A run after the first starts at the last ID of the one before (the bound is inclusive).
        if (r.ID === skip || !keep(r)) continue;
        const s = stub(r);
        if (o.filter && !filterMatches(o.filter, s)) continue;
        if (o.perPage > 0 && items.length === o.perPage) return { items, nextToken: head + r.ID };
        items.push(s);
      }
      const last = rows[rows.length - 1];
      if (rows.length < run || last === undefined) break;
      from = skip = last.ID;
    }
  }
  return { items, nextToken: "" };
}

export interface VolumePageQuery {
  /** One namespace; undefined for every namespace (`?namespace=*`). */
  namespace?: string;
  pluginId?: string;
  /** The namespaces the caller may see (ACL); a namespace it may not is never read. */
  keepNamespace(ns: string): boolean;
  /** Any further test on the volume as listed (`node_id`). */
  keep(v: CSIVolume): boolean;
}

/** The CSI volume list (volumes with their plugin-derived fields, as VolumeEndpoint.list). */
export function volumePageFromStore<S>(
  store: StateStore,
  o: ListOptions,
  q: VolumePageQuery,
  stub: (v: CSIVolume) => S,
): Page<S> | undefined {
  const plugins = new Map<string, CSIPlugin | undefined>();
  const view = (v: CSIVolume) => {
    if (!plugins.has(v.PluginID)) plugins.set(v.PluginID, store.getPlugin(v.PluginID));
    return denormalizeVolume(v, plugins.get(v.PluginID));
  };
  const namespaces = (q.namespace !== undefined ? [q.namespace] : store.rangeNamespaces("volumes")).filter(
    (ns) => ns.includes(".") || q.keepNamespace(ns),
  );
  const src: Source<CSIVolume> = {
    namespaces,
    range: (r) =>
      store.volumeRange({ ...r, ...(q.pluginId !== undefined ? { pluginId: q.pluginId } : {}) }).map(view),
  };
  return pageFromSource(o, src, (v) => q.keep(v), stub);
}

/** The job list of one namespace, or of every namespace the caller may see. */
export function jobPageFromStore<S>(
  store: StateStore,
  o: ListOptions,
  q: { namespace?: string; keepNamespace(ns: string): boolean },
  stub: (j: Job) => S,
): Page<S> | undefined {
  const namespaces = (q.namespace !== undefined ? [q.namespace] : store.rangeNamespaces("jobs")).filter(
    (ns) => ns.includes(".") || q.keepNamespace(ns),
  );
  return pageFromSource(o, { namespaces, range: (r) => store.jobRange(r) }, () => true, stub);
}

/** The node list. */
export function nodePageFromStore<S>(
  store: StateStore,
  o: ListOptions,
  stub: (n: Node) => S,
): Page<S> | undefined {
  return pageFromSource(o, { namespaces: undefined, range: (r) => store.nodeRange(r) }, () => true, stub);
}
