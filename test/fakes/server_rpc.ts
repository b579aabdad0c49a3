/** A fake of the client's ServerRpc for csi_hook tests: scripted claim/unpublish failures, recorded calls. */
import { BerthError, type ErrorCode } from "../../src/structs/errors.js";
import type { ServerMethods, VolumeClaimRequest } from "../../src/structs/rpc.js";
import type { ServerRpc } from "../../src/client/allocrunner/csi_hook.js";
import { claimedVolume } from "../builders/client_records.js";
import type { RecordedCall } from "./csi_client.js";

/** Records RPC calls into `log` (shared with the fake CSI client, so order is observable). */
export class FakeRpc implements ServerRpc {
  claimFailures: ErrorCode[] = [];
  unpublishFailures: ErrorCode[] = [];
  /** When set, every Unpublish fails with this code (e.g. a server that is away). */
  unpublishAlways: ErrorCode | null = null;
  readonly claims: VolumeClaimRequest[] = [];
  /** Volume IDs whose plugin the hook looked up (CSIVolume.GetForNode). */
  readonly lookups: string[] = [];
  /** Every CSIVolume.ReleaseProgress report, in order. */
  readonly progress: ServerMethods["CSIVolume.ReleaseProgress"][0][] = [];

  constructor(readonly log: RecordedCall[]) {}

  async call<M extends keyof ServerMethods>(
    method: M,
    req: ServerMethods[M][0],
    opts?: { signal?: AbortSignal },
  ): Promise<ServerMethods[M][1]> {
    opts?.signal?.throwIfAborted();
    if (method === "CSIVolume.GetForNode") {
      // Not logged: the call-order assertions are about claims, releases and CSI calls.
      const r = req as ServerMethods["CSIVolume.GetForNode"][0];
      this.lookups.push(r.VolumeID);
      const res: ServerMethods["CSIVolume.GetForNode"][1] = {
        ID: r.VolumeID,
        Namespace: r.Namespace,
        PluginID: "fake",
      };
      return res;
    }
    if (method === "CSIVolume.ReleaseProgress") {
      // Not logged either: release reports are asserted on through `progress`.
      this.progress.push(structuredClone(req as ServerMethods["CSIVolume.ReleaseProgress"][0]));
      return { Recorded: true, Index: 3 } as ServerMethods[M][1];
    }
    this.log.push({ method: `rpc:${method}`, req: structuredClone(req), start: Date.now(), end: Date.now() });
    if (method === "CSIVolume.Claim") {
      const r = req as VolumeClaimRequest;
      this.claims.push(r);
      const code = this.claimFailures.shift();
      if (code) throw new BerthError(code, `claim refused: ${code}`);
      const res: ServerMethods["CSIVolume.Claim"][1] = {
        Volume: claimedVolume({ ID: r.VolumeID, ExternalID: `ext-${r.VolumeID}` }),
        PublishContext: { from: "controller" },
        Index: 1,
      };
      return res;
    }
    if (method === "CSIVolume.Unpublish") {
      const code = this.unpublishAlways ?? this.unpublishFailures.shift();
      if (code) throw new BerthError(code, `unpublish failed: ${code}`);
      return { Index: 2 } as ServerMethods[M][1];
    }
    throw new BerthError("ERR_NOT_FOUND", `unexpected rpc ${method}`);
  }
}
