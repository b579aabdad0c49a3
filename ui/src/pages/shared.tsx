/** Pieces more than one page shows: an allocation table, an evaluation's placement failures. */
import type { ComponentChildren } from "preact";
import { Badge, Table } from "../components.js";
import { ago, short } from "../format.js";
import { Link, paths } from "../router.js";
import type { AllocationListStub, AllocationMetric, Evaluation } from "../types.js";

export function AllocTable(props: {
  allocs: readonly AllocationListStub[];
  label: string;
  showJob?: boolean;
}) {
  const rows = [...props.allocs].sort((a, b) => b.CreateIndex - a.CreateIndex);
  const cols: [string, (a: AllocationListStub) => ComponentChildren][] = [
    ["ID", (a) => <Link to={paths.alloc(a.ID)}>{short(a.ID)}</Link>],
    ["Name", (a) => a.Name],
  ];
  if (props.showJob === true)
    cols.push(["Job", (a) => <Link to={paths.job(a.JobID, a.Namespace)}>{a.JobID}</Link>]);
  cols.push(
    [
      "Node",
      (a) => (a.NodeID ? <Link to={paths.client(a.NodeID)}>{a.NodeName || short(a.NodeID)}</Link> : "–"),
    ],
    ["Desired", (a) => a.DesiredStatus],
    ["Status", (a) => <Badge value={a.ClientStatus} title={a.ClientDescription} />],
    ["Modified", (a) => ago(a.ModifyTime)],
  );
  return <Table rows={rows} cols={cols} rowKey={(a) => a.ID} empty="No allocations." label={props.label} />;
}

/** Why a scheduler pass left task groups unplaced: Nomad's AllocationMetric, per group. */
export function PlacementFailures(props: { ev: Evaluation }) {
  const failed = Object.entries(props.ev.FailedTGAllocs ?? {});
  if (failed.length === 0) return <span class="muted">none</span>;
  return (
    <div class="failures">
      {failed.map(([group, m]) => (
        <div class="failure" key={group}>
          <strong>{group}</strong>: <MetricText m={m} />
        </div>
      ))}
    </div>
  );
}

function MetricText(props: { m: AllocationMetric }) {
  const m = props.m;
  const reasons: string[] = [];
  const available = Object.values(m.NodesAvailable ?? {}).reduce((a, b) => a + b, 0);
  reasons.push(`${m.NodesEvaluated} of ${available} nodes evaluated`);
  for (const [why, n] of Object.entries(m.ConstraintFiltered ?? {})) reasons.push(`${why} filtered ${n}`);
  for (const [cls, n] of Object.entries(m.ClassFiltered ?? {})) reasons.push(`class ${cls} filtered ${n}`);
  if (m.NodesExhausted > 0) reasons.push(`${m.NodesExhausted} exhausted`);
  for (const [dim, n] of Object.entries(m.DimensionExhausted ?? {})) reasons.push(`${dim} exhausted on ${n}`);
  for (const q of m.QuotaExhausted ?? []) reasons.push(`quota ${q} exhausted`);
  if (m.CoalescedFailures > 0) reasons.push(`${m.CoalescedFailures} more failed the same way`);
  return <span>{reasons.join("; ")}</span>;
}

export function EvalTable(props: { evals: readonly Evaluation[]; label: string; showJob?: boolean }) {
  const rows = [...props.evals].sort((a, b) => b.CreateIndex - a.CreateIndex);
  const cols: [string, (e: Evaluation) => ComponentChildren][] = [["ID", (e) => <code>{short(e.ID)}</code>]];
  if (props.showJob === true)
    cols.push(["Job", (e) => <Link to={paths.job(e.JobID, e.Namespace)}>{e.JobID}</Link>]);
  cols.push(
    ["Triggered by", (e) => e.TriggeredBy],
    ["Status", (e) => <Badge value={e.Status} title={e.StatusDescription} />],
    ["Placement failures", (e) => <PlacementFailures ev={e} />],
    ["Created", (e) => ago(e.CreateTime)],
  );
  return <Table rows={rows} cols={cols} rowKey={(e) => e.ID} empty="No evaluations." label={props.label} />;
}
