/**
 * A task's image on the node: used when the daemon has it (an air-gapped node gets its images with
 * `docker load` or `docker import`), pulled otherwise or when the task says `force_pull`, within
 * `image_pull_timeout`. A pull that fails or runs out of time is an error naming the image and the
 * reason (the task runner makes it a "Driver Failure" event and the restart policy decides), never a
 * hang. Nomad pulls an image tagged `latest` at every start; berth uses the local copy of any tag,
 * so a node without a registry runs what was loaded.
 */
import type Docker from "dockerode";
import { BerthError } from "../../../structs/errors.js";

export interface ImageNeed {
  image: string;
  forcePull: boolean;
  pullTimeoutMs: number;
}

/** The image's ID once it is on the node. */
export async function ensureImage(
  docker: Docker,
  need: ImageNeed,
  signal: AbortSignal,
  emit: (type: string, message: string, details?: Record<string, string>) => void,
): Promise<string> {
  if (!need.forcePull) {
    const local = await inspectImage(docker, need.image, signal);
    if (local !== null) return local;
  }
  emit("Driver", `Downloading image`, { image: need.image });
  const deadline = AbortSignal.timeout(need.pullTimeoutMs);
  const both = AbortSignal.any([signal, deadline]);
  try {
    const stream = await docker.pull(need.image, { abortSignal: both });
    await new Promise<void>((resolve, reject) => {
      docker.modem.followProgress(stream, (err: Error | null, events: { error?: string }[]) => {
        const failed = err?.message ?? events.find((e) => e.error)?.error;
        if (failed) reject(new Error(failed));
        else resolve();
      });
      both.addEventListener("abort", () => reject(new Error("aborted", { cause: both.reason })), {
        once: true,
      });
    });
  } catch (err) {
    const why = deadline.aborted
      ? `image_pull_timeout of ${need.pullTimeoutMs / 1000}s passed`
      : err instanceof Error
        ? err.message
        : String(err);
    throw new BerthError("ERR_DRIVER", `Failed to pull \`${need.image}\`: ${why}`);
  }
  const pulled = await inspectImage(docker, need.image, signal);
  if (pulled === null) {
    throw new BerthError("ERR_DRIVER", `Failed to pull \`${need.image}\`: not on the node after the pull`);
  }
  return pulled;
}

/** The image's ID, or null when the daemon does not have it. */
async function inspectImage(docker: Docker, image: string, signal: AbortSignal): Promise<string | null> {
  try {
    signal.throwIfAborted();
    const info = await docker.getImage(image).inspect();
    return info.Id;
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return null;
    throw new BerthError("ERR_DRIVER", `inspecting image \`${image}\`: ${(err as Error).message}`);
  }
}
