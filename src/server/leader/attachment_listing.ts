/**
 * The provider's whole list of a plugin's volumes and the nodes each is published to, for the
 * attachment reconciler: ListVolumes through a healthy controller that advertises
 * LIST_VOLUMES_PUBLISHED_NODES, following `next_token` to the last page. Whole or nothing: a page
 * that fails, a token that repeats or a list that does not end within `maxPages` gives no listing
 * (the reason instead), so nothing is ever decided on part of the provider's view — a volume
 * missing from a partial list would look detached everywhere.
 */
import { asBerthError } from "../../structs/errors.js";
import type { ControllerClient } from "../clientconn/controller.js";

export type PublishedListing =
  | {
      ok: true;
      /** External volume ID → the provider's node IDs it is published to. */ published: Map<
        string,
        string[]
      >;
    }
  | { ok: false; reason: string; code: string };

export interface ListingLimits {
  pageSize: number;
  maxPages: number;
  callTimeoutMs: number;
}

export async function listPublished(
  controllers: Pick<ControllerClient, "call">,
  pluginId: string,
  limits: ListingLimits,
  signal: AbortSignal,
): Promise<PublishedListing> {
  const published = new Map<string, string[]>();
  const tokens = new Set<string>();
  let token = "";
  try {
    for (let page = 0; page < limits.maxPages; page++) {
      const res = await controllers.call(
        pluginId,
        "ClientCSI.ControllerListVolumes",
        { PluginID: pluginId, MaxEntries: limits.pageSize, StartingToken: token },
        {
          requires: "SupportsListVolumesAttachedNodes",
          signal,
          timeoutMs: limits.callTimeoutMs,
          retryDeadlineMs: 0,
        },
      );
      for (const e of res.Entries) {
        published.set(e.ExternalID, [...(published.get(e.ExternalID) ?? []), ...e.PublishedExternalNodeIDs]);
      }
      if (res.NextToken === "") return { ok: true, published };
      if (tokens.has(res.NextToken)) {
        return {
          ok: false,
          code: "ERR_CSI_BAD_ANSWER",
          reason: `ListVolumes answered next_token ${JSON.stringify(res.NextToken)} twice`,
        };
      }
      tokens.add(res.NextToken);
      token = res.NextToken;
    }
    return {
      ok: false,
      code: "ERR_CSI_BAD_ANSWER",
      reason: `the plugin's volume list did not end within ${limits.maxPages} pages`,
    };
  } catch (err) {
    const e = asBerthError(err);
    return { ok: false, code: e.code, reason: e.message };
  }
}
