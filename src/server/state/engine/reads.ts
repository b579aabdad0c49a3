/**
 * The engine's reads as the methods of the objects that hold it (composition, as Kotlin's `by`
 * delegation): both stores and a txn's writer hold one SqliteEngine and serve StateStore's and
 * StateWriter's reads by calling it. The names are listed once here, checked complete against
 * store.ts at compile time, and installed on a holder's prototype by `withEngineReads`; a holder
 * that defines one of them itself (the writer's plugin reads, which first flush its deltas) keeps
 * its own. So no file forwards read by read, and no class extends another.
 */
import type { ChangeReader, StateReader, StateStore } from "../store.js";

/** Every read of StateReader (what a txn's writer serves). */
export const READER_READS = [
  "index",
  "tableIndex",
  "getAclPolicy",
  "listAclPolicies",
  "getAclToken",
  "aclTokenBySecretHash",
  "listAclTokens",
  "aclBootstrapIndex",
  "getNode",
  "listNodes",
  "getJob",
  "listJobs",
  "getAlloc",
  "listAllocs",
  "allocsByNode",
  "allocsByJob",
  "hasLiveAllocOfJob",
  "allocsByVolume",
  "getVolume",
  "listVolumes",
  "getPlugin",
  "pluginSummary",
  "listPlugins",
  "healthyPluginInstances",
  "healthyPluginInstancesAfter",
  "getEval",
  "listEvals",
  "evalsByJob",
  "getVolumeIntent",
  "listVolumeIntents",
  "getPeriodicLaunch",
  "getPluginCapacity",
  "listPluginCapacities",
  "getDeployment",
  "listDeployments",
  "deploymentsByJob",
  "jobVersions",
  "getNamespace",
  "listNamespaces",
] as const satisfies readonly (keyof StateReader)[];

/** Every read of StateStore: StateReader's, ChangeReader's and the paged ranges. */
export const STORE_READS = [
  ...READER_READS,
  "volumesModifiedSince",
  "allocsModifiedSince",
  "nodesModifiedSince",
  "nodesDeletedAt",
  "volumeRange",
  "jobRange",
  "nodeRange",
  "rangeNamespaces",
] as const satisfies readonly (keyof StateStore)[];

export type StoreReadName = (typeof STORE_READS)[number];
/** The reads a store serves from its engine. */
export type StoreReads = Pick<StateStore, StoreReadName>;
/** What a store implements itself: txn, waitFor, the commit feed, the quarantine, close. */
export type StoreOwn = Omit<StateStore, StoreReadName>;

// Compile-time: a read added to store.ts without its name here fails the build on these lines.
type Unlisted = Exclude<keyof StateReader | keyof ChangeReader, StoreReadName>;
const listedAll: [Unlisted] extends [never] ? true : Unlisted = true;
void listedAll;
// And every read takes at most four arguments, as the installed methods pass on (withEngineReads).
type TooManyArgs = {
  [K in StoreReadName]: Parameters<StateStore[K]> extends [unknown?, unknown?, unknown?, unknown?]
    ? never
    : K;
}[StoreReadName];
const fourAtMost: [TooManyArgs] extends [never] ? true : TooManyArgs = true;
void fourAtMost;

/** An object serving its reads from an engine (the engine implements StoreReads). */
type Holder = { readonly engine: StoreReads };

/** `C`'s statics, constructing its instances with the reads `N` beside their own. */
export type WithReads<C extends new (...args: never[]) => Holder, N extends StoreReadName> = Omit<
  C,
  "prototype"
> &
  (new (...args: ConstructorParameters<C>) => InstanceType<C> & Pick<StateStore, N>);

/**
 * Installs `names` on `cls.prototype` as calls to the holder's engine (a method the class defines
 * itself is kept), and returns `cls` typed as constructing its instances with those reads.
 */
export function withEngineReads<C extends new (...args: never[]) => Holder, N extends StoreReadName>(
  cls: C,
  names: readonly N[],
): WithReads<C, N> {
  const proto = cls.prototype as Record<string, unknown>;
  for (const name of names) {
    if (Object.hasOwn(proto, name)) continue;
    Object.defineProperty(proto, name, {
      // Four fixed parameters, the most any read takes: no rest array per call on hot reads.
      value: function (this: Holder, a: unknown, b: unknown, c: unknown, d: unknown): unknown {
        return (this.engine[name] as (...p: unknown[]) => unknown).call(this.engine, a, b, c, d);
      },
      writable: true,
      configurable: true,
    });
  }
  return cls as unknown as WithReads<C, N>;
}
