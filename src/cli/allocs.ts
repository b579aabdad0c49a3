/** The allocations table that `job status`, `volume status` and `plugin status` share. */
import type { AllocationListStub } from "../api/index.js";
import { ago, shortId, table } from "./format.js";

export function allocationsSection(allocs: AllocationListStub[], verbose: boolean, nowMs: number): string[] {
  if (allocs.length === 0) return ["Allocations", "No allocations placed"];
  const rows = [["ID", "Node ID", "Task Group", "Desired", "Status", "Created", "Modified"]];
  const sorted = [...allocs].sort((a, b) => b.CreateIndex - a.CreateIndex);
  for (const a of sorted) {
    rows.push([
      shortId(a.ID, verbose),
      shortId(a.NodeID, verbose),
      a.TaskGroup,
      a.DesiredStatus,
      a.ClientStatus,
      ago(a.CreateTime / 1e6, nowMs),
      ago(a.ModifyTime / 1e6, nowMs),
    ]);
  }
  return ["Allocations", ...table(rows)];
}
