/**
 * The client side of one volume's release as a pure step decision (DESIGN step 7), the node's
 * counterpart of the server's `nextReleaseStep` (structs/claim.ts): given what is persisted (the
 * PendingRelease record: unmounted yet?) and what the loop has learned so far (is the node plugin
 * registered, or waited out; did the server take the claim back), the next step to perform.
 * csi_release.ts performs it, persists the checkpoint, and asks again until "done".
 *
 * No I/O here: every rule of the sequence is tested on plain data (release_decide.test.ts).
 */
import { asBerthError } from "../../structs/errors.js";
import type { ReleaseStatusStep } from "../../structs/volume.js";
import { csiMethodOf } from "../csimanager/csi_retry.js";

/** Where the node plugin a release unmounts through stands, as far as this attempt knows. */
export type ReleasePluginState =
  /** Registered on this node now. */
  | "registered"
  /** Not registered; not waited for yet in this attempt. */
  | "missing"
  /** Not registered after the whole plugin wait of this attempt. */
  | "waited-out";

export interface ReleaseFacts {
  /**
   * The persisted checkpoint: the node step is done (by this release, or by an operator's
   * `volume detach`, which marks the record). A record that is gone counts as unmounted.
   */
  unmounted: boolean;
  plugin: ReleasePluginState;
  /** CSIVolume.Unpublish node-detached answered (or the server no longer knows the claim). */
  serverReleased: boolean;
}

export type ClientReleaseStep =
  /** NodeUnpublish (and NodeUnstage for the last user) through the registered node plugin. */
  | "unmount"
  /** Wait up to the plugin wait for the node plugin to register. */
  | "wait-plugin"
  /**
   * The plugin stayed missing: end the alloc's use without a CSI call, allowed by the volume
   * manager only when nothing is left mounted (else it refuses and the release waits again).
   */
  | "release-without-plugin"
  /** CSIVolume.Unpublish with State node-detached: the server walks the claim on. */
  | "server-unpublish"
  /** Drop the stub and the pending record. */
  | "done";

export function nextClientReleaseStep(f: ReleaseFacts): ClientReleaseStep {
  if (!f.unmounted) {
    if (f.plugin === "registered") return "unmount";
    return f.plugin === "missing" ? "wait-plugin" : "release-without-plugin";
  }
  return f.serverReleased ? "done" : "server-unpublish";
}

/** The node steps one node plugin call stands for, by the CSI method retryCsiCall was told it runs. */
const STEP_OF_CSI_METHOD: Readonly<Record<string, ReleaseStatusStep>> = {
  NodeUnpublishVolume: "node-unpublish",
  NodeUnstageVolume: "node-unstage",
};

/** The status step of a failed NodeUnpublish/NodeUnstage call, by its CSI method. */
export function stepOfCsiMethod(method: string): ReleaseStatusStep | undefined {
  return STEP_OF_CSI_METHOD[method];
}

/**
 * The status step a failure of `step` is shown as (task event, CSIVolume.ReleaseProgress). Known
 * from the step and structured data, never from message text: an unmount that failed in a CSI call
 * names the call (csiMethodOf); one that found no plugin to talk to (ERR_CSI_PLUGIN_UNAVAILABLE)
 * waits for it; a release without plugin that was refused waits for the plugin too.
 */
export function reportedStep(step: ClientReleaseStep, err: unknown): ReleaseStatusStep {
  switch (step) {
    case "unmount": {
      const method = csiMethodOf(err);
      const csiStep = method === undefined ? undefined : stepOfCsiMethod(method);
      if (csiStep) return csiStep;
      return asBerthError(err).code === "ERR_CSI_PLUGIN_UNAVAILABLE" ? "wait-plugin" : "node-unpublish";
    }
    case "wait-plugin":
    case "release-without-plugin":
      return "wait-plugin";
    case "server-unpublish":
    case "done":
      return "server-unpublish";
  }
}
