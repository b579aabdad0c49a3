/**
 * The parts of a volume's page: its claims and where each claim's release stands (berth's claim
 * records, `?claims=true`), its usage and health (`?usage=true`, when the server has figures),
 * topology, mount options and capabilities. Mount flags arrive redacted from the API ("[REDACTED]")
 * and are shown as they came: the UI never has, and never asks for, the real values.
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { seg, write } from "../api.js";
import { Badge, ConfirmAction, KV, OutcomeLine, Pairs, Section, Table, type Outcome } from "../components.js";
import { ago, bytes, short } from "../format.js";
import { Link, paths } from "../router.js";
import type {
  CSIVolumeClaim,
  CSITopology,
  VolumeControllerCondition,
  VolumeDetail,
  VolumeUsage,
} from "../types.js";

interface ClaimRow extends CSIVolumeClaim {
  /** "current" (ReadClaims/WriteClaims) or "past" (a release under way: PastClaims). */
  kind: "current" | "past";
}

function claimRows(v: VolumeDetail): ClaimRow[] {
  const rows: ClaimRow[] = [];
  for (const c of Object.values(v.WriteClaims ?? {})) rows.push({ ...c, kind: "current" });
  for (const c of Object.values(v.ReadClaims ?? {})) rows.push({ ...c, kind: "current" });
  for (const c of Object.values(v.PastClaims ?? {})) rows.push({ ...c, kind: "past" });
  return rows;
}

/** The claims, each with its release step in flight, and a Detach per node. */
export function Claims(props: { v: VolumeDetail }) {
  const v = props.v;
  const rows = claimRows(v);
  // A detach removes the row it was clicked in: its outcome is shown under the table instead.
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const cols: [string, (c: ClaimRow) => ComponentChildren][] = [
    ["Allocation", (c) => <Link to={paths.alloc(c.AllocationID)}>{short(c.AllocationID)}</Link>],
    ["Node", (c) => <Link to={paths.client(c.NodeID)}>{short(c.NodeID)}</Link>],
    ["Mode", (c) => c.Mode],
    ["Access mode", (c) => c.AccessMode],
    ["State", (c) => <Badge value={c.State} title={c.kind === "past" ? "being released" : "held"} />],
    ["Release", (c) => <ReleaseText c={c} />],
    ["", (c) => <DetachAction v={v} nodeId={c.NodeID} report={setOutcome} />],
  ];
  return (
    <Section title="Claims">
      <Table label="Claims" rows={rows} rowKey={(c) => c.AllocationID} empty="No claims." cols={cols} />
      <OutcomeLine outcome={outcome?.ok === true && outcome.text === "" ? null : outcome} />
    </Section>
  );
}

/** Where a claim's release stands: its step, attempts, last error and next try; "–" when none is pending. */
function ReleaseText(props: { c: ClaimRow }) {
  const r = props.c.ReleaseStatus;
  if (!r) return <span class="muted">{props.c.kind === "past" ? "releasing" : "–"}</span>;
  return (
    <span class="release">
      <code>{r.Step}</code> · {r.Attempts} {r.Attempts === 1 ? "attempt" : "attempts"}
      {r.NextAttempt > 0 && <> · next {ago(r.NextAttempt)}</>}
      {r.LastError !== "" && <span class="release-error">{r.LastError}</span>}
    </span>
  );
}

function DetachAction(props: { v: VolumeDetail; nodeId: string; report: (o: Outcome) => void }) {
  const { v, nodeId } = props;
  const run = async () => {
    const q = `?node=${seg(nodeId)}&namespace=${seg(v.Namespace)}`;
    await write("DELETE", `/v1/volume/csi/${seg(v.ID)}/detach${q}`);
    return `Volume ${v.ID} detached from node ${short(nodeId)}.`;
  };
  return (
    <ConfirmAction
      label="Detach"
      question={`Detach ${v.ID} from node ${short(nodeId)}? Only claims of allocations that have stopped are released.`}
      confirmLabel="Yes, detach"
      danger
      run={run}
      report={props.report}
    />
  );
}

export function Usage(props: { u: VolumeUsage }) {
  const u = props.u;
  const pct = u.BytesTotal > 0 ? ` (${Math.round((100 * u.BytesUsed) / u.BytesTotal)}%)` : "";
  return (
    <Section title="Usage">
      <KV
        items={[
          ["Used", `${bytes(u.BytesUsed)}${pct}`],
          ["Available", bytes(u.BytesAvailable)],
          ["Total", bytes(u.BytesTotal)],
          [
            "Inodes",
            u.InodesTotal > 0 ? `${u.InodesUsed} used, ${u.InodesAvailable} free of ${u.InodesTotal}` : "–",
          ],
          ["Condition", <Badge value={u.Abnormal ? "abnormal" : "healthy"} title={u.Message} />],
          ["Message", u.Message || undefined],
          ["Node", u.NodeID ? <Link to={paths.client(u.NodeID)}>{short(u.NodeID)}</Link> : "–"],
          ["Measured", ago(u.UpdateTime)],
        ]}
      />
    </Section>
  );
}

/** What the volume's controller plugin says of it (ControllerGetVolume), beside the node's figures. */
export function ControllerCondition(props: { c: VolumeControllerCondition }) {
  const c = props.c;
  return (
    <Section title="Controller condition">
      <KV
        items={[
          ["Condition", <Badge value={c.Abnormal ? "abnormal" : "healthy"} title={c.Message} />],
          ["Message", c.Message || undefined],
          ["Checked", ago(c.UpdateTime)],
        ]}
      />
    </Section>
  );
}

function Segments(props: { t: CSITopology }) {
  return <Pairs map={props.t.Segments} />;
}

export function Placement(props: { v: VolumeDetail }) {
  const v = props.v;
  const req = v.RequestedTopologies;
  const mo = v.MountOptions;
  return (
    <Section title="Topology and mount options">
      <KV
        items={[
          [
            "Accessible from",
            (v.Topologies ?? []).length === 0
              ? "anywhere"
              : v.Topologies.map((t, i) => <Segments key={i} t={t} />),
          ],
          ["Required", req?.Required?.length ? req.Required.map((t, i) => <Segments key={i} t={t} />) : "–"],
          [
            "Preferred",
            req?.Preferred?.length ? req.Preferred.map((t, i) => <Segments key={i} t={t} />) : "–",
          ],
          ["File system", mo?.FSType || "–"],
          [
            "Mount flags",
            mo?.MountFlags?.length ? mo.MountFlags.map((f, i) => <code key={i}>{f}</code>) : "–",
          ],
        ]}
      />
      <Table
        label="Requested capabilities"
        rows={v.RequestedCapabilities ?? []}
        rowKey={(c) => `${c.AccessMode}/${c.AttachmentMode}`}
        empty="No capabilities requested."
        cols={[
          ["Access mode", (c) => c.AccessMode],
          ["Attachment mode", (c) => c.AttachmentMode],
        ]}
      />
    </Section>
  );
}
