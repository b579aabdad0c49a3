/**
 * `volume detach VOLUME NODE` (Nomad's DELETE /v1/volume/csi/:id/detach?node=): releases every
 * claim that allocs on one node hold on a volume, for when the node did not (or could not) do it
 * itself. Refused while an alloc on that node that still runs holds a claim: detaching would pull
 * the volume out from under a task. For each claim of a terminal (or forgotten) alloc:
 *  1. a live node is asked to NodeUnpublish/NodeUnstage for that alloc (ClientCSI.NodeDetachVolume;
 *     a node that is down is skipped, the one permitted break of the CSI ordering);
 *  2. the claim goes through the normal release walk (node-detached → ControllerUnpublish when due →
 *     freed), each step persisted (ClaimEndpoint.unpublish).
 * Idempotent: a volume without claims on the node is already detached.
 *
 * The node is named by its ID, a unique prefix of its ID (as Nomad's CLI resolves one), or its
 * exact name (resolveNode); one that matches several nodes is a 400 naming the field `node`.
 */
import { isAllocTerminal } from "../../structs/alloc.js";
import { BerthError, notFound, validationError } from "../../structs/errors.js";
import { isNodeOutOfContact, type Node } from "../../structs/node.js";
import type { CSIVolume, ClaimState, VolumeClaim } from "../../structs/volume.js";
import type { ServerDeps } from "../deps.js";
import type { StateReader } from "../state/store.js";
import { volumeView } from "../state/views.js";
import { AwaitingControllerError, type ClaimEndpoint } from "./claim.js";
import { claimsOnNode } from "./volume_claims.js";

/** Deadline of one NodeDetachVolume (the node agent retries transient plugin errors within it). */
const NODE_DETACH_TIMEOUT_MS = 120_000;

export async function detachVolume(
  deps: ServerDeps,
  claims: ClaimEndpoint,
  namespace: string,
  volumeId: string,
  nodeRef: string,
  signal?: AbortSignal,
): Promise<void> {
  const vol = volumeView(deps.store, namespace, volumeId);
  if (!vol) throw notFound("volume", volumeId);
  const nodeId = resolveNode(deps.store, nodeRef).ID;
  const held = claimsOnNode(vol, nodeId);
  refuseRunning(deps, vol, held);
  await releaseClaims(deps, claims, vol, held, signal);
  deps.log.info("volume detached from node", { volume: volumeId, node: nodeId, claims: held.length });
}

/**
 * The node `ref` names: the node with that ID; else the one node whose ID starts with it or whose
 * name is it (a node with that ID or name that is gone is ERR_NOT_FOUND). Several → ERR_VALIDATION
 * on `node`, listing them, so the caller can give an ID instead. Reads every node only when `ref`
 * is not an ID (an operator's command, not a hot path).
 */
export function resolveNode(store: Pick<StateReader, "getNode" | "listNodes">, ref: string): Node {
  const exact = ref === "" ? undefined : store.getNode(ref);
  if (exact) return exact;
  const matches = ref === "" ? [] : store.listNodes().filter((n) => n.ID.startsWith(ref) || n.Name === ref);
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) throw notFound("node", ref);
  const which = matches
    .map((n) => `${n.ID} (${n.Name})`)
    .sort()
    .join(", ");
  throw validationError(
    "node",
    `${JSON.stringify(ref)} matches ${matches.length} nodes by ID prefix or name: ${which}; give a node ID`,
  );
}

/** ERR_CONFLICT (409) when an alloc that still runs holds one of `held`. */
export function refuseRunning(deps: ServerDeps, vol: CSIVolume, held: VolumeClaim[]): void {
  const running = held.filter((c) => {
    const alloc = deps.store.getAlloc(c.AllocationID);
    return alloc !== undefined && !isAllocTerminal(alloc);
  });
  if (running.length === 0) return;
  const nodes = [...new Set(running.map((c) => c.NodeID))].join(", ");
  throw new BerthError(
    "ERR_CONFLICT",
    `volume ${JSON.stringify(vol.ID)} is in use on node ${nodes} by running allocation(s) ${running.map((c) => c.AllocationID).join(", ")}: stop them first`,
  );
}

/**
 * Releases each claim: the node step on a live node (ClientCSI.NodeDetachVolume), skipped for a
 * node that is down or gone, then the release walk. Claims are handled one at a time, in order.
 */
export async function releaseClaims(
  deps: ServerDeps,
  claims: ClaimEndpoint,
  vol: CSIVolume,
  held: VolumeClaim[],
  signal?: AbortSignal,
): Promise<void> {
  for (const claim of held) await releaseClaim(deps, claims, vol, claim, signal);
}

/**
 * Like releaseClaims, but a claim whose release waits for a controller that does not exist
 * (AwaitingControllerError) does not stop the walk: it is returned, for the forced deregister to
 * drop and report. Any other failure is thrown as is.
 */
export async function releaseClaimsOrLeave(
  deps: ServerDeps,
  claims: ClaimEndpoint,
  vol: CSIVolume,
  held: VolumeClaim[],
  signal?: AbortSignal,
): Promise<VolumeClaim[]> {
  const left: VolumeClaim[] = [];
  for (const claim of held) {
    try {
      await releaseClaim(deps, claims, vol, claim, signal);
    } catch (err) {
      if (!(err instanceof AwaitingControllerError)) throw err;
      left.push(claim);
    }
  }
  return left;
}

async function releaseClaim(
  deps: ServerDeps,
  claims: ClaimEndpoint,
  vol: CSIVolume,
  claim: VolumeClaim,
  signal?: AbortSignal,
): Promise<void> {
  const node = deps.store.getNode(claim.NodeID);
  let state: ClaimState = claim.State;
  if (claim.State === "taken" && node && !isNodeOutOfContact(node)) {
    await deps.conns.call(
      claim.NodeID,
      "ClientCSI.NodeDetachVolume",
      {
        PluginID: vol.PluginID,
        VolumeID: vol.ID,
        Namespace: vol.Namespace,
        ExternalID: vol.ExternalID,
        AllocID: claim.AllocationID,
      },
      { timeoutMs: NODE_DETACH_TIMEOUT_MS, signal },
    );
    state = "node-detached";
  }
  await claims.unpublish(
    {
      VolumeID: vol.ID,
      Namespace: vol.Namespace,
      AllocationID: claim.AllocationID,
      NodeID: claim.NodeID,
      State: state,
    },
    signal,
  );
}
