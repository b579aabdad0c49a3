/**
 * Who owns a CSI plugin's host directory (`<data>/client/csi/<type>/<id>`): the node, not one plugin
 * alloc (docs/design.md invariant). The directory is keyed by plugin, so during a plugin job update the
 * old alloc and its successor share it, and every volume staged or published through the plugin
 * lives below it. It is torn down (`umount -R`) only by the last party to leave it, and only when:
 * - no other plugin task uses it: none holds it in this process (prestart .. final stop), and none
 *   is recorded with a task handle in the client state DB (a task re-attached after an agent
 *   restart whose hooks have not run yet, or one whose runner has not been rebuilt yet);
 * - no volume uses it: no stub and no pending release of any alloc on this node has its staging or
 *   publish path below it (a running consumer, or a release still to be driven).
 * Both facts come from the state DB and this process's own holders, so the rule holds across agent
 * restarts with nothing extra persisted. One lock per directory orders a successor's setup against a
 * predecessor's teardown, so a successor never finds its directory unmounted under it.
 */
import path from "node:path";
import type { Logger } from "../../../internal/log.js";
import type { Allocation } from "../../../structs/alloc.js";
import { safeJoin } from "../../../structs/ids.js";
import type { TaskCSIPluginConfig } from "../../../structs/job.js";
import type { CsiVolumeStub, PendingRelease } from "../../state/types.js";
import { KeyedMutex } from "../../../internal/keyed_mutex.js";
import { unmountTree } from "./plugin_dir.js";

/** The host directory of a plugin: keyed by plugin type and ID, the same for every alloc. */
export function pluginHostDir(dataDir: string, plugin: Pick<TaskCSIPluginConfig, "Type" | "ID">): string {
  return safeJoin(dataDir, "client", "csi", plugin.Type, plugin.ID);
}

/** What is known about one plugin directory when someone leaves it. */
export interface PluginDirFacts {
  /** Plugin tasks (`<allocId>/<task>`) using the directory: live here or recorded in the state DB. */
  holders: ReadonlySet<string>;
  /** Volume uses below the directory (`<allocId>/<alias>`): stubs and releases not yet unmounted. */
  volumeUses: readonly string[];
}

export type TeardownDecision = { tearDown: true } | { tearDown: false; reason: string };

/**
 * The ownership rule as a pure function. `leaving` is the plugin task that stops (null when the
 * last volume use of the directory just went away); it never counts as a holder of its own.
 */
export function teardownDecision(leaving: string | null, facts: PluginDirFacts): TeardownDecision {
  const others = [...facts.holders].filter((h) => h !== leaving).sort();
  if (others.length > 0) {
    return { tearDown: false, reason: `still used by plugin task ${others.join(", ")}` };
  }
  if (facts.volumeUses.length > 0) {
    return {
      tearDown: false,
      reason: `volumes staged or published through it are in use or pending release: ${[...facts.volumeUses].sort().join(", ")}`,
    };
  }
  return { tearDown: true };
}

/** The part of the client state DB the owner reads; StateDB satisfies it. */
export interface PluginDirsStore {
  listAllocs(): { alloc: Allocation }[];
  getTaskHandle(allocId: string, task: string): unknown;
  listAllVolumeStubs(): { allocId: string; alias: string; stub: CsiVolumeStub }[];
  listAllocsWithPendingReleases(): string[];
  getPendingReleases(allocId: string): Record<string, PendingRelease>;
}

export interface PluginDirsConfig {
  dataDir: string;
  /** Without a store only this process's holders count (unit tests of one layer). */
  store?: PluginDirsStore;
  log?: Logger;
  /** Tears a directory down; `umount -R` by default. */
  tearDown?: (dir: string) => Promise<void>;
}

export class PluginDirs {
  private readonly lock = new KeyedMutex();
  /** Directory → plugin tasks holding it in this process. */
  private readonly held = new Map<string, Set<string>>();

  constructor(private readonly cfg: PluginDirsConfig) {}

  /**
   * A plugin task takes the directory: it is held before `prepare` (creating and sharing it) runs,
   * under the directory's lock, so a teardown by a predecessor either ran before or sees this holder.
   */
  acquire(dir: string, holder: string, prepare: () => Promise<void>): Promise<void> {
    return this.lock.run(dir, async () => {
      this.holdersOf(dir).add(holder);
      await prepare();
    });
  }

  /** Records a holder without any setup: a plugin task re-attached after an agent restart. */
  hold(dir: string, holder: string): void {
    this.holdersOf(dir).add(holder);
  }

  /**
   * A plugin task stops for good: it lets go of the directory, which is torn down when the rule
   * allows. Returns what was decided (the reason is logged when it is kept).
   */
  leave(dir: string, holder: string): Promise<TeardownDecision> {
    return this.lock.run(dir, async () => {
      this.held.get(dir)?.delete(holder);
      return this.decideAndApply(dir, holder);
    });
  }

  /**
   * A volume use just ended (its release completed): when no plugin task and no other volume use
   * the directory the stub lay under any more, it is torn down. A stub outside any plugin directory
   * of this data dir is ignored.
   */
  async volumeReleased(stub: Pick<CsiVolumeStub, "targetPath" | "stagingPath">): Promise<void> {
    const dir = this.dirOf(stub.targetPath || stub.stagingPath);
    if (dir === null) return;
    await this.lock.run(dir, () => this.decideAndApply(dir, null));
  }

  /** The facts about `dir`, from this process's holders and the state DB. */
  facts(dir: string): PluginDirFacts {
    const holders = new Set(this.held.get(dir) ?? []);
    const volumeUses: string[] = [];
    const store = this.cfg.store;
    if (store) {
      for (const { alloc } of store.listAllocs()) {
        const group = alloc.Job.TaskGroups.find((g) => g.Name === alloc.TaskGroup);
        for (const task of group?.Tasks ?? []) {
          const plugin = task.CSIPluginConfig;
          if (!plugin || pluginHostDir(this.cfg.dataDir, plugin) !== dir) continue;
          if (store.getTaskHandle(alloc.ID, task.Name) !== undefined) holders.add(`${alloc.ID}/${task.Name}`);
        }
      }
      for (const { allocId, alias, stub } of store.listAllVolumeStubs()) {
        if (below(dir, stub)) volumeUses.push(`${allocId}/${alias}`);
      }
      for (const allocId of store.listAllocsWithPendingReleases()) {
        for (const [alias, rel] of Object.entries(store.getPendingReleases(allocId))) {
          const key = `${allocId}/${alias}`;
          if (!rel.unmounted && below(dir, rel.stub) && !volumeUses.includes(key)) volumeUses.push(key);
        }
      }
    }
    return { holders, volumeUses };
  }

  private async decideAndApply(dir: string, leaving: string | null): Promise<TeardownDecision> {
    const decision = teardownDecision(leaving, this.facts(dir));
    if (!decision.tearDown) {
      // A plugin stopping while others still use its dir is news; a release while it runs is not.
      if (leaving === null) this.cfg.log?.debug("plugin dir kept", { dir, reason: decision.reason });
      else this.cfg.log?.info("plugin dir kept", { dir, reason: decision.reason });
      return decision;
    }
    await (this.cfg.tearDown ?? unmountTree)(dir);
    if (this.held.get(dir)?.size === 0) this.held.delete(dir);
    return decision;
  }

  /** The plugin directory (`<data>/client/csi/<type>/<id>`) a host path lies in, or null. */
  private dirOf(hostPath: string): string | null {
    if (!hostPath) return null;
    const root = safeJoin(this.cfg.dataDir, "client", "csi");
    const rel = path.relative(root, path.resolve(hostPath)).split(path.sep);
    if (rel.length < 3 || rel[0] === ".." || rel[0] === "") return null;
    return path.join(root, rel[0]!, rel[1]!);
  }

  private holdersOf(dir: string): Set<string> {
    let set = this.held.get(dir);
    if (!set) {
      set = new Set();
      this.held.set(dir, set);
    }
    return set;
  }
}

function below(dir: string, stub: Pick<CsiVolumeStub, "targetPath" | "stagingPath">): boolean {
  return [stub.targetPath, stub.stagingPath].some(
    (p) => p !== "" && path.resolve(p).startsWith(dir + path.sep),
  );
}
