/**
 * One CSI volume, live: `GET /v1/volume/csi/:id?claims=true&usage=true` (berth's claim records
 * and, from servers that collect them, usage figures; Nomad's fields otherwise). Actions: a
 * snapshot through its controller plugin, and detach from a node (on each claim, volume_parts).
 */
import { useState } from "preact/hooks";
import { qs, seg, write } from "../api.js";
import { useBlocking } from "../blocking.js";
import { Badge, ConfirmAction, KV, Loaded, Page, Pairs, Section } from "../components.js";
import { ago, bytes, ratio } from "../format.js";
import { Link, paths } from "../router.js";
import type { CSISnapshot, VolumeDetail } from "../types.js";
import { AllocTable } from "./shared.js";
import { Claims, ControllerCondition, Placement, Usage } from "./volume_parts.js";

export function VolumePage(props: { id: string; ns: string }) {
  const vol = useBlocking<VolumeDetail>(
    `/v1/volume/csi/${seg(props.id)}${qs({ namespace: props.ns, claims: true, usage: true })}`,
  );
  return (
    <Page title={`Volume ${props.id}`} sub={`namespace ${props.ns}`}>
      <Loaded live={vol} render={(v) => <VolumeBody v={v} />} />
    </Page>
  );
}

function VolumeBody(props: { v: VolumeDetail }) {
  const v = props.v;
  const capacity =
    v.Capacity > 0
      ? bytes(v.Capacity)
      : v.RequestedCapacityMin > 0 || v.RequestedCapacityMax > 0
        ? "unknown"
        : "–";
  return (
    <>
      <Section title="Overview" actions={<SnapshotAction v={v} />}>
        <KV
          items={[
            ["Name", v.Name],
            ["External ID", <code>{v.ExternalID}</code>],
            ["Plugin", <Link to={paths.plugin(v.PluginID)}>{v.PluginID}</Link>],
            ["Provider", `${v.Provider} ${v.ProviderVersion}`.trim() || "–"],
            ["Schedulable", <Badge value={v.Schedulable} />],
            ["Access mode", v.AccessMode || "–"],
            ["Attachment mode", v.AttachmentMode || "–"],
            ["Capacity", capacity],
            ["Requested capacity", `${bytes(v.RequestedCapacityMin)} – ${bytes(v.RequestedCapacityMax)}`],
            [
              "Controllers healthy",
              v.ControllerRequired ? ratio(v.ControllersHealthy, v.ControllersExpected) : "not required",
            ],
            ["Nodes healthy", ratio(v.NodesHealthy, v.NodesExpected)],
            ["Snapshot / clone of", v.SnapshotID || v.CloneID || undefined],
            ["Parameters", <Pairs map={v.Parameters} />],
            ["Context", <Pairs map={v.Context} />],
            ["Created", ago(v.CreateTime)],
          ]}
        />
      </Section>
      {v.Usage ? <Usage u={v.Usage} /> : null}
      {v.ControllerCondition ? <ControllerCondition c={v.ControllerCondition} /> : null}
      <Claims v={v} />
      <Section title="Allocations">
        <AllocTable allocs={v.Allocations ?? []} label="Volume allocations" showJob />
      </Section>
      <Placement v={v} />
    </>
  );
}

function SnapshotAction(props: { v: VolumeDetail }) {
  const v = props.v;
  const [name, setName] = useState("");
  const run = async () => {
    const body = { Snapshots: [{ SourceVolumeID: v.ID, PluginID: v.PluginID, Name: name.trim() }] };
    const res = await write<{ Snapshots: CSISnapshot[] | null }>(
      "PUT",
      `/v1/volumes/snapshot${qs({ namespace: v.Namespace })}`,
      body,
    );
    const snap = res.Snapshots?.[0];
    return snap
      ? `Snapshot ${snap.Name} created (${snap.ID}, ${bytes(snap.SizeBytes)}).`
      : "Snapshot created.";
  };
  return (
    <ConfirmAction label="Snapshot" question={`Snapshot ${v.ID}?`} confirmLabel="Yes, snapshot" run={run}>
      <label class="inline">
        Name{" "}
        <input
          type="text"
          value={name}
          placeholder={`${v.ID}-<time>`}
          onInput={(e) => setName(e.currentTarget.value)}
        />
      </label>
    </ConfirmAction>
  );
}
