/** Validated jobs: one that mounts a CSI volume at /data, one that runs a CSI plugin, a plain one. */
import { validateJob } from "../../src/structs/job_validate.js";
import type { Job } from "../../src/structs/job.js";

export function csiJob(
  id: string,
  opts: {
    count?: number;
    source?: string;
    accessMode?: string;
    readOnly?: boolean;
    perAlloc?: boolean;
    type?: string;
  } = {},
): Job {
  return validateJob({
    ID: id,
    Type: opts.type ?? "service",
    TaskGroups: [
      {
        Name: "g",
        Count: opts.count ?? 1,
        Volumes: {
          data: {
            Type: "csi",
            Source: opts.source ?? "vol1",
            AccessMode: opts.accessMode ?? "single-node-writer",
            AttachmentMode: "file-system",
            ReadOnly: opts.readOnly ?? false,
            PerAlloc: opts.perAlloc ?? false,
          },
        },
        Tasks: [{ Name: "t", Driver: "exec", VolumeMounts: [{ Volume: "data", Destination: "/data" }] }],
      },
    ],
  });
}

/** A job of `type` with one group `g` of `count` running a `pluginType` CSI plugin `p1`, optionally pinned to a node. */
export function pluginJob(
  id: string,
  opts: { type?: string; pluginType?: string; node?: string; count?: number } = {},
): Job {
  return validateJob({
    ID: id,
    Type: opts.type ?? "system",
    TaskGroups: [
      {
        Name: "g",
        Count: opts.count ?? 1,
        ...(opts.node
          ? { Constraints: [{ LTarget: "${node.unique.id}", RTarget: opts.node, Operand: "=" }] }
          : {}),
        Tasks: [
          {
            Name: "plugin",
            Driver: "exec",
            CSIPluginConfig: { ID: "p1", Type: opts.pluginType ?? "node", MountDir: "/csi" },
          },
        ],
      },
    ],
  });
}

/** A job without volumes or plugins. */
export function plainJob(id: string, type = "service"): Job {
  return validateJob({
    ID: id,
    Type: type,
    TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }],
  });
}
