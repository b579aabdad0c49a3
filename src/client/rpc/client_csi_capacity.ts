/**
 * ClientCSI.ControllerGetCapacity: GetCapacity through this node's healthy controller instance, for
 * the leader's capacity poll (server/capacity/poller.ts). One attempt; GET_CAPACITY is checked
 * first (ERR_CSI_NOT_SUPPORTED without it). No volume capabilities are sent: berth asks for the
 * capacity of the segment as a whole, which the spec lets a plugin answer for any volume it makes.
 */
import type { ClientCsiPeer } from "./client_csi_peer.js";
import type { ControllerOf } from "./client_csi_storage.js";

export function registerCapacityHandler(
  peer: ClientCsiPeer,
  controller: ControllerOf,
  timeoutMs: number,
): void {
  peer.handle("ClientCSI.ControllerGetCapacity", async (req, signal) => {
    const { client } = await controller(req.PluginID, "getCapacity", signal);
    const res = await client.getCapacity(
      {
        volumeCapabilities: [],
        parameters: { ...req.Parameters },
        accessibleTopology: req.Topology ? { segments: { ...req.Topology.Segments } } : null,
      },
      { signal, timeoutMs },
    );
    return {
      AvailableCapacity: res.availableCapacity,
      MaximumVolumeSize: res.maximumVolumeSize,
      MinimumVolumeSize: res.minimumVolumeSize,
    };
  });
}
