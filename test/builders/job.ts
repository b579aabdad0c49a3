/** A validated service job with one group that mounts one CSI volume at /data. */
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
