/**
 * `GET /v1/volumes?type=host` and the node test of `GET /v1/volumes?type=csi&node_id=`.
 *
 * berth's host volumes are Nomad's static ones: `host_volume` blocks of a client's config, kept in
 * its node record (Node.HostVolumes). Nomad's `?type=host` list answers HostVolumeStub (api/
 * host_volumes.go); a static volume has no ID, plugin, namespace or capacity of its own, so those
 * are Go zero values, State is "ready" and the indexes are the node record's. `node_id` narrows the
 * list to one node; the list is ordered by node ID, then name.
 */
import type { CSIVolume } from "../../structs/volume.js";
import { blockingIndex, sendJson } from "./respond.js";
import type { Ctx } from "../request_ctx.js";
import type { HttpEndpoints } from "../request_ctx.js";

/** True when one of the volume's claims (live or being released) is on `nodeId`. */
export function claimedOnNode(v: CSIVolume, nodeId: string): boolean {
  return [v.ReadClaims, v.WriteClaims, v.PastClaims].some((m) =>
    Object.values(m).some((c) => c.NodeID === nodeId),
  );
}

export async function listHostVolumes(ctx: Ctx, api: HttpEndpoints): Promise<void> {
  const nodeId = ctx.query.get("node_id") || undefined;
  const index = await blockingIndex(api.store, ctx.query, ["nodes"], ctx.signal);
  const nodes = api.store
    .listNodes()
    .filter((n) => nodeId === undefined || n.ID === nodeId)
    .sort((a, b) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0));
  const out = nodes.flatMap((n) =>
    Object.values(n.HostVolumes ?? {})
      .sort((a, b) => (a.Name < b.Name ? -1 : a.Name > b.Name ? 1 : 0))
      .map((hv) => ({
        Namespace: "",
        ID: "",
        Name: hv.Name,
        PluginID: "",
        NodePool: "default",
        NodeID: n.ID,
        CapacityBytes: 0,
        State: "ready",
        CreateIndex: n.CreateIndex,
        CreateTime: 0,
        ModifyIndex: n.ModifyIndex,
        ModifyTime: 0,
      })),
  );
  sendJson(ctx.res, out, index);
}
