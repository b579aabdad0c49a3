/**
 * What the volumewatcher does with each claim, pure. A claim is reaped — driven through the release
 * walk by the server — when its release has started (any state past `taken`: finishing it is always
 * right), when its node is down or gone (the node step skipped), or when its live node confirmed it
 * holds nothing of the volume for its finished alloc. Otherwise a claim still `taken` on a live
 * node is never reaped by the server: the node step (NodeUnpublish/NodeUnstage) is the node agent's,
 * which unmounts and then reports `node-detached` itself.
 *
 * - Fence hold (issue 28): a node agent that cannot renew its lease with any server for its TTL
 *   stops, by itself, every task of an alloc holding a single-writer claim, within the tasks' kill
 *   timeouts. So a single-writer claim of a down node is freed only once THIS watcher has seen the
 *   node down for the claim's fence bound (`fenceHoldMsOf`), measured on its own monotonic clock
 *   from its first pass that saw the node down: clock values never cross servers, only rates, so a
 *   new leader counts afresh. Exempt: an alloc the node itself reported finished (complete or
 *   failed: its tasks are dead, nothing writes). Read claims and multi-writer claims of a down node
 *   are released at once, as before.
 * - Disconnected nodes (Nomad's lost_after) are out of contact like down ones, but a claim of an
 *   `unknown` alloc is kept: the alloc is still desired to run. When it is lost, the node's episode
 *   restarts (node_loss.ts), so its fence hold counts from then.
 * - Unused claims: a claim whose answer never reached its node (the server committed it and
 *   published the volume, the caller was cancelled) stays `taken` with nothing mounted and nobody
 *   to release it. When the alloc has ended (the node reported it terminal, or it is gone) and its
 *   live node answered that it holds nothing of the volume for the alloc — no mount, no pending
 *   release, the alloc not active there — the claim is released without the node step
 *   (`release-unused`). Whether and when to ask the node is the watcher's (orphans.ts); a node that
 *   cannot be asked keeps the claim waiting: no guessing.
 */
import { allocTaskGroup, isAllocTerminal, isClientTerminal, type Allocation } from "../../structs/alloc.js";
import { NS_PER_MS } from "../../structs/job.js";
import { isNodeOutOfContact, type Node } from "../../structs/node.js";
import { isSingleWriterClaim } from "../../structs/single_writer.js";
import { liveClaims, type CSIVolume, type VolumeClaim } from "../../structs/volume.js";

export type ClaimAction =
  /** The claim is in use (live alloc on a live node): nothing to do. */
  | "keep"
  /** Release it through the walk (the node step is skipped when the node is down or gone). */
  | "release"
  /** Its alloc is done but the node is up: the node agent owns the node step; wait for it. */
  | "wait-node"
  /** A single-writer claim of a down node, within the node's self-fence bound: not yet. */
  | "hold-fence"
  /** Its live node confirmed it holds nothing for the finished alloc: release, node step skipped. */
  | "release-unused";

/** What the watcher knows of one claim beyond the store. All times are monotonic ms (performance.now()). */
export interface ClaimFacts {
  now: number;
  /** When this watcher's first pass saw the claim's node down (this down episode); undefined: now. */
  nodeDownSince: number | undefined;
  /** The claim's fence bound (fenceHoldMsOf). */
  fenceHoldMs: number;
  /** The claim's live node answered, recently, that it holds nothing of the volume for the alloc. */
  nodeHoldsNothing: boolean;
}

/** No observation yet: a down node's single-writer claims are held, nothing is released unasked. */
export const NO_FACTS: ClaimFacts = {
  now: 0,
  nodeDownSince: undefined,
  fenceHoldMs: Infinity,
  nodeHoldsNothing: false,
};

type AllocView = Pick<Allocation, "ClientStatus" | "DesiredStatus">;

export function nodeIsGone(node: Pick<Node, "Status"> | undefined): boolean {
  return node === undefined || isNodeOutOfContact(node);
}

/** The alloc is over for its node: it reported it terminal, or the alloc is gone. */
export function allocEnded(alloc: Pick<Allocation, "ClientStatus"> | undefined): boolean {
  return alloc === undefined || isClientTerminal(alloc.ClientStatus);
}

/**
 * The claim must wait out the fence bound before it is freed on a down node: a single-writer claim
 * whose alloc's tasks may still run there (anything but complete or failed, which only the node
 * reports; `lost` is the server's guess).
 */
export function needsFenceHold(
  claim: Pick<VolumeClaim, "Mode" | "AccessMode">,
  alloc: Pick<Allocation, "ClientStatus"> | undefined,
): boolean {
  if (!isSingleWriterClaim(claim)) return false;
  return alloc?.ClientStatus !== "complete" && alloc?.ClientStatus !== "failed";
}

export interface FenceHoldOptions {
  /** A fixed bound for every claim (tests); undefined: derived from the alloc's tasks. */
  fenceHoldMs: number | undefined;
  /** Added to the longest task stop time. */
  fenceMarginMs: number;
  /** The least derived bound. */
  minFenceHoldMs: number;
}

/** Nomad's default kill_timeout: a task record without one (or an alloc that is gone) gets it. */
export const DEFAULT_KILL_TIMEOUT_MS = 5_000;

/**
 * The claim's fence bound: how long after its node was seen down the node's self-fence has surely
 * stopped the alloc's tasks — the longest of their stop times (kill_timeout, plus shutdown_delay,
 * which a stop waits first) plus the margin, at least the minimum. A gone alloc counts as one
 * task with the default kill timeout.
 */
export function fenceHoldMsOf(alloc: Allocation | undefined, o: FenceHoldOptions): number {
  if (o.fenceHoldMs !== undefined) return o.fenceHoldMs;
  const tasks = alloc?.Job ? (allocTaskGroup(alloc)?.Tasks ?? []) : [];
  let longest = tasks.length === 0 ? DEFAULT_KILL_TIMEOUT_MS : 0;
  for (const t of tasks) {
    const kill = Number.isFinite(t.KillTimeout) && t.KillTimeout >= 0 ? t.KillTimeout / NS_PER_MS : 0;
    const delay = (t.ShutdownDelay ?? 0) > 0 ? t.ShutdownDelay! / NS_PER_MS : 0;
    longest = Math.max(longest, kill + delay);
  }
  return Math.max(o.minFenceHoldMs, longest + o.fenceMarginMs);
}

export function claimAction(
  claim: VolumeClaim,
  alloc: AllocView | undefined,
  node: Pick<Node, "Status"> | undefined,
  facts: ClaimFacts = NO_FACTS,
): ClaimAction {
  if (claim.State !== "taken") return "release";
  if (nodeIsGone(node)) {
    // Unknown: its node is disconnected within the group's lost_after; the alloc may still run
    // there and keeps its claims until it is lost (server/node_loss.ts).
    if (alloc?.ClientStatus === "unknown") return "keep";
    if (!needsFenceHold(claim, alloc)) return "release";
    const since = facts.nodeDownSince ?? facts.now;
    return facts.now - since >= facts.fenceHoldMs ? "release" : "hold-fence";
  }
  if (alloc === undefined || isAllocTerminal(alloc)) {
    return facts.nodeHoldsNothing && allocEnded(alloc) ? "release-unused" : "wait-node";
  }
  return "keep";
}

export interface HeldClaim {
  claim: VolumeClaim;
  /** Monotonic ms at which the hold ends. */
  until: number;
  /** The claim's fence bound. */
  holdMs: number;
}

export interface VolumeWork {
  release: VolumeClaim[];
  /** Released without the node step: their live node holds nothing of them. */
  releaseUnused: VolumeClaim[];
  waiting: VolumeClaim[];
  /** The waiting claims whose alloc ended (the node may be asked about them: orphans.ts). */
  askable: VolumeClaim[];
  held: HeldClaim[];
}

/** What volumeWork needs of the watcher for each claim. */
export interface WorkInputs {
  alloc: (id: string) => Allocation | undefined;
  node: (id: string) => Pick<Node, "Status" | "StatusUpdatedAt"> | undefined;
  /** The facts of one claim, given its alloc and node as read. */
  facts: (
    claim: VolumeClaim,
    alloc: Allocation | undefined,
    node: Pick<Node, "Status" | "StatusUpdatedAt"> | undefined,
  ) => ClaimFacts;
}

/** Every claim of `vol` (live and past), sorted into what the watcher should do with it. */
export function volumeWork(vol: CSIVolume, inputs: WorkInputs): VolumeWork {
  const work: VolumeWork = { release: [], releaseUnused: [], waiting: [], askable: [], held: [] };
  for (const claim of [...liveClaims(vol), ...Object.values(vol.PastClaims)]) {
    const alloc = inputs.alloc(claim.AllocationID);
    const node = inputs.node(claim.NodeID);
    const facts = inputs.facts(claim, alloc, node);
    const action = claimAction(claim, alloc, node, facts);
    if (action === "release") work.release.push(claim);
    else if (action === "release-unused") work.releaseUnused.push(claim);
    else if (action === "hold-fence") {
      const until = (facts.nodeDownSince ?? facts.now) + facts.fenceHoldMs;
      work.held.push({ claim, until, holdMs: facts.fenceHoldMs });
    } else if (action === "wait-node") {
      work.waiting.push(claim);
      if (allocEnded(alloc)) work.askable.push(claim);
    }
  }
  return work;
}
