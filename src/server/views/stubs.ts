/** List stubs in Nomad's JSON shapes, and the full answers that embed them. Secrets never appear. */
import type { Allocation } from "../../structs/alloc.js";
import type { Job } from "../../structs/job.js";
import { isParameterized } from "../../structs/parameterized.js";
import { drainStrategyOf, isDraining, type Node } from "../../structs/node.js";
import type { CSIPlugin } from "../../structs/plugin.js";
import { redactAlloc, redactVolume } from "../../structs/redact.js";
import type { CSIInfo } from "../../structs/csi_terms.js";
import type { CSIVolume } from "../../structs/volume.js";
import { goTime, unixSeconds, ZERO_TIME } from "./go_time.js";

export function jobStub(j: Job) {
  return {
    ID: j.ID,
    Name: j.Name,
    Namespace: j.Namespace,
    Type: j.Type,
    Priority: j.Priority,
    Status: j.Status,
    Stop: j.Stop,
    Datacenters: j.Datacenters,
    CreateIndex: j.CreateIndex,
    ModifyIndex: j.ModifyIndex,
    JobModifyIndex: j.JobModifyIndex,
    SubmitTime: j.SubmitTime,
    // Nomad's stub: a launched child names its parent; a parent says which kind it is.
    ParentID: j.ParentID ?? "",
    Periodic: j.Periodic != null && j.Dispatched !== true,
    ParameterizedJob: isParameterized(j),
  };
}

/**
 * Task states as Nomad's TaskState: StartedAt/FinishedAt are time.Time, the zero time until they
 * happen (berth stores null then).
 */
export function taskStatesView(states: Allocation["TaskStates"]) {
  return Object.fromEntries(
    Object.entries(states ?? {}).map(([name, st]) => [
      name,
      { ...st, StartedAt: st.StartedAt ?? ZERO_TIME, FinishedAt: st.FinishedAt ?? ZERO_TIME },
    ]),
  );
}

/** The full alloc answer: secrets redacted (redact.ts) and task states in Nomad's time shape. */
export function allocFull(a: Allocation) {
  // ReportOrder is the server's bookkeeping of node reports, not part of Nomad's alloc.
  const { ReportOrder: _order, ...r } = redactAlloc(a);
  return { ...r, TaskStates: taskStatesView(r.TaskStates) };
}

export function allocStub(a: Allocation) {
  return {
    ID: a.ID,
    Name: a.Name,
    Namespace: a.Namespace,
    NodeID: a.NodeID,
    NodeName: a.NodeName,
    JobID: a.JobID,
    JobVersion: a.Job.Version,
    TaskGroup: a.TaskGroup,
    DesiredStatus: a.DesiredStatus,
    DesiredDescription: a.DesiredDescription,
    DesiredTransition: { Migrate: a.DesiredTransition?.Migrate ?? null },
    ClientStatus: a.ClientStatus,
    ClientDescription: a.ClientDescription,
    TaskStates: taskStatesView(a.TaskStates),
    RescheduleTracker: a.RescheduleTracker ?? null,
    FollowupEvalID: a.FollowupEvalID ?? "",
    NextAllocation: a.NextAllocation ?? "",
    DeploymentStatus: a.DeploymentStatus ?? null,
    CreateIndex: a.CreateIndex,
    ModifyIndex: a.ModifyIndex,
    CreateTime: a.CreateTime,
    ModifyTime: a.ModifyTime,
  };
}

export function nodeStub(n: Node) {
  return {
    ID: n.ID,
    Name: n.Name,
    Datacenter: n.Datacenter,
    NodeClass: n.NodeClass,
    Status: n.Status,
    StatusDescription: n.StatusDescription,
    Drain: isDraining(n),
    SchedulingEligibility: n.SchedulingEligibility,
    Drivers: driversView(n.Drivers),
    LastDrain: n.LastDrain ?? null,
    CreateIndex: n.CreateIndex,
    ModifyIndex: n.ModifyIndex,
  };
}

/**
 * Drivers as Nomad's DriverInfo. Whether a driver supports volume mounts is a capability Nomad keeps
 * inside the driver plugin; berth shows it as one of the driver's Attributes, the open map Nomad's
 * DriverInfo has for what a driver fingerprints.
 */
function driversView(drivers: Node["Drivers"]) {
  return Object.fromEntries(
    Object.entries(drivers).map(([name, d]) => [
      name,
      {
        Attributes: { [`driver.${name}.mounts`]: String(d.SupportsMounts) },
        Detected: d.Detected,
        Healthy: d.Healthy,
        HealthDescription: d.HealthDescription,
      },
    ]),
  );
}

/** A plugin instance as Nomad's CSIInfo: UpdateTime is a time.Time (RFC 3339), stored as Unix ms. */
export function csiInfoView(i: CSIInfo) {
  return { ...i, UpdateTime: goTime(i.UpdateTime) };
}

function csiInfoMap(m: Record<string, CSIInfo>) {
  return Object.fromEntries(Object.entries(m).map(([k, i]) => [k, csiInfoView(i)]));
}

/**
 * The full node answer: the record with Nomad's Drain flag, a DrainStrategy that is never absent,
 * StatusUpdatedAt in Unix seconds (Nomad's unit; stored as ms) and CSIInfo times as RFC 3339. The
 * server's own bookkeeping (CSIPluginsDetachedAt, ReportOrder) and the hash of the node's secret stay inside.
 */
export function nodeFull(n: Node) {
  const { CSIPluginsDetachedAt: _detached, SecretIDHash: _secret, ReportOrder: _order, ...rest } = n;
  return {
    ...rest,
    Drivers: driversView(n.Drivers),
    StatusUpdatedAt: unixSeconds(n.StatusUpdatedAt),
    CSIControllerPlugins: csiInfoMap(n.CSIControllerPlugins),
    CSINodePlugins: csiInfoMap(n.CSINodePlugins),
    Drain: isDraining(n),
    DrainStrategy: drainStrategyOf(n),
    LastDrain: n.LastDrain ?? null,
  };
}

export function pluginStub(p: Omit<CSIPlugin, "Controllers" | "Nodes">) {
  return {
    ID: p.ID,
    Provider: p.Provider,
    ControllerRequired: p.ControllerRequired,
    ControllersHealthy: p.ControllersHealthy,
    ControllersExpected: p.ControllersExpected,
    NodesHealthy: p.NodesHealthy,
    NodesExpected: p.NodesExpected,
    CreateIndex: p.CreateIndex,
    ModifyIndex: p.ModifyIndex,
  };
}

/**
 * Nomad's CSIPlugin answer: the record (with ControllerJobs/NodeJobs) and the stubs of the plugin's
 * own allocs; the GC bookkeeping (EmptySince) stays inside the server.
 */
export function pluginFull(p: CSIPlugin, allocations: Allocation[]) {
  const { EmptySince: _emptySince, ...rest } = p;
  return {
    ...rest,
    Controllers: csiInfoMap(p.Controllers),
    Nodes: csiInfoMap(p.Nodes),
    Allocations: allocations.map(allocStub),
    CreateTime: p.CreateTime ?? 0,
    ModifyTime: p.ModifyTime ?? 0,
  };
}

/** `vol` is denormalised (volumeView). */
export function volumeStub(v: CSIVolume) {
  return {
    ID: v.ID,
    Namespace: v.Namespace,
    Name: v.Name,
    ExternalID: v.ExternalID,
    Topologies: v.Topologies,
    AccessMode: v.AccessMode,
    AttachmentMode: v.AttachmentMode,
    CurrentReaders: Object.keys(v.ReadClaims).length,
    CurrentWriters: Object.keys(v.WriteClaims).length,
    Schedulable: v.Schedulable,
    PluginID: v.PluginID,
    Provider: v.Provider,
    ControllerRequired: v.ControllerRequired,
    ControllersHealthy: v.ControllersHealthy,
    ControllersExpected: v.ControllersExpected,
    NodesHealthy: v.NodesHealthy,
    NodesExpected: v.NodesExpected,
    ResourceExhausted: goTime(v.ResourceExhausted),
    CreateIndex: v.CreateIndex,
    ModifyIndex: v.ModifyIndex,
    CreateTime: v.CreateTime ?? 0,
    ModifyTime: v.ModifyTime ?? 0,
  };
}

/**
 * The full volume answer: the redacted record plus Nomad's ReadAllocs/WriteAllocs (alloc ID →
 * null) and Allocations (stubs of every claiming alloc the server still knows). berth's claim
 * records (ReadClaims/WriteClaims/PastClaims, which Nomad never serialises) only with `claims`;
 * berth's measured usage and health (`Usage`, null until a node reported, and
 * `ControllerCondition`, null until the controller plugin was polled) only with `usage`.
 */
export function volumeFull(
  v: CSIVolume,
  allocOf: (id: string) => Allocation | undefined,
  opts: { claims?: boolean; usage?: boolean } = {},
) {
  const ids = new Set([
    ...Object.keys(v.ReadClaims),
    ...Object.keys(v.WriteClaims),
    ...Object.keys(v.PastClaims),
  ]);
  const allocations = [...ids]
    .map(allocOf)
    .filter((a): a is Allocation => a !== undefined)
    .map(allocStub);
  const { ReadClaims, WriteClaims, PastClaims, Usage, ControllerCondition, ...redacted } = redactVolume(v);
  return {
    ...redacted,
    ...(opts.claims ? { ReadClaims, WriteClaims, PastClaims } : {}),
    ...(opts.usage ? { Usage: Usage ?? null, ControllerCondition: ControllerCondition ?? null } : {}),
    ResourceExhausted: goTime(v.ResourceExhausted),
    CreateTime: v.CreateTime ?? 0,
    ModifyTime: v.ModifyTime ?? 0,
    ReadAllocs: Object.fromEntries(Object.keys(v.ReadClaims).map((id) => [id, null])),
    WriteAllocs: Object.fromEntries(Object.keys(v.WriteClaims).map((id) => [id, null])),
    Allocations: allocations,
  };
}
