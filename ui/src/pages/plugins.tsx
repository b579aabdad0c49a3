/**
 * CSI plugins (`GET /v1/plugins?type=csi`) with healthy/expected controllers and nodes, and one
 * plugin (`GET /v1/plugin/csi/:id`): each instance, its health and the capabilities it advertised.
 */
import { qs, seg } from "../api.js";
import { useBlocking } from "../blocking.js";
import { Badge, KV, Loaded, Page, Section, Table } from "../components.js";
import { ago, ratio, short } from "../format.js";
import { Link, paths } from "../router.js";
import type { CSIControllerInfo, CSIInfo, CSINodeInfo, CSIPlugin, CSIPluginListStub } from "../types.js";
import { AllocTable } from "./shared.js";

export function PluginsPage() {
  const plugins = useBlocking<CSIPluginListStub[]>(`/v1/plugins${qs({ type: "csi" })}`);
  return (
    <Page title="CSI plugins">
      <Loaded
        live={plugins}
        render={(list) => (
          <Table
            label="CSI plugins"
            rows={[...list].sort((a, b) => a.ID.localeCompare(b.ID))}
            rowKey={(p) => p.ID}
            empty="No CSI plugins. Run a job with a csi_plugin block."
            cols={[
              ["ID", (p) => <Link to={paths.plugin(p.ID)}>{p.ID}</Link>],
              ["Provider", (p) => p.Provider],
              ["Controllers healthy", (p) => ratio(p.ControllersHealthy, p.ControllersExpected)],
              ["Nodes healthy", (p) => ratio(p.NodesHealthy, p.NodesExpected)],
              ["Controller required", (p) => (p.ControllerRequired ? "yes" : "no")],
            ]}
          />
        )}
      />
    </Page>
  );
}

export function PluginPage(props: { id: string }) {
  const plugin = useBlocking<CSIPlugin>(`/v1/plugin/csi/${seg(props.id)}`);
  return (
    <Page title={`Plugin ${props.id}`}>
      <Loaded live={plugin} render={(p) => <PluginBody p={p} />} />
    </Page>
  );
}

interface Instance {
  nodeId: string;
  kind: "controller" | "node";
  info: CSIInfo;
}

function PluginBody(props: { p: CSIPlugin }) {
  const p = props.p;
  const instances: Instance[] = [
    ...Object.entries(p.Controllers ?? {}).map(([nodeId, info]) => ({
      nodeId,
      kind: "controller" as const,
      info,
    })),
    ...Object.entries(p.Nodes ?? {}).map(([nodeId, info]) => ({ nodeId, kind: "node" as const, info })),
  ];
  return (
    <>
      <Section title="Overview">
        <KV
          items={[
            ["Provider", `${p.Provider} ${p.Version}`.trim()],
            ["Controllers healthy", ratio(p.ControllersHealthy, p.ControllersExpected)],
            ["Nodes healthy", ratio(p.NodesHealthy, p.NodesExpected)],
            ["Controller required", p.ControllerRequired ? "yes" : "no"],
            ["Updated", ago(p.ModifyTime)],
          ]}
        />
      </Section>
      <Section title="Instances">
        <Table
          label="Plugin instances"
          rows={instances}
          rowKey={(i) => `${i.kind}/${i.nodeId}`}
          empty="No instance has reported."
          cols={[
            ["Node", (i) => <Link to={paths.client(i.nodeId)}>{short(i.nodeId)}</Link>],
            ["Type", (i) => i.kind],
            [
              "Healthy",
              (i) => (
                <Badge value={i.info.Healthy ? "healthy" : "unhealthy"} title={i.info.HealthDescription} />
              ),
            ],
            ["Description", (i) => i.info.HealthDescription],
            [
              "Allocation",
              (i) =>
                i.info.AllocID ? <Link to={paths.alloc(i.info.AllocID)}>{short(i.info.AllocID)}</Link> : "–",
            ],
            ["Capabilities", (i) => <Capabilities info={i.info} />],
          ]}
        />
      </Section>
      <Section title="Allocations">
        <AllocTable allocs={p.Allocations ?? []} label="Plugin allocations" showJob />
      </Section>
    </>
  );
}

const CONTROLLER_CAPS: [keyof CSIControllerInfo, string][] = [
  ["SupportsCreateDelete", "create/delete volume"],
  ["SupportsAttachDetach", "publish/unpublish volume"],
  ["SupportsListVolumes", "list volumes"],
  ["SupportsGetCapacity", "get capacity"],
  ["SupportsCreateDeleteSnapshot", "create/delete snapshot"],
  ["SupportsListSnapshots", "list snapshots"],
  ["SupportsClone", "clone"],
  ["SupportsReadOnlyAttach", "read-only attach"],
  ["SupportsExpand", "expand volume"],
  ["SupportsListVolumesAttachedNodes", "list attached nodes"],
  ["SupportsCondition", "volume condition"],
  ["SupportsGet", "get volume"],
];

const NODE_CAPS: [keyof CSINodeInfo, string][] = [
  ["RequiresNodeStageVolume", "stage/unstage volume"],
  ["SupportsStats", "volume stats"],
  ["SupportsExpand", "expand volume"],
  ["SupportsCondition", "volume condition"],
];

/** The capabilities an instance advertised, as the names CSI gives them. */
function Capabilities(props: { info: CSIInfo }) {
  const c = props.info.ControllerInfo;
  const n = props.info.NodeInfo;
  const caps: string[] = [];
  if (c) for (const [k, label] of CONTROLLER_CAPS) if (c[k] === true) caps.push(label);
  if (n) {
    for (const [k, label] of NODE_CAPS) if (n[k] === true) caps.push(label);
    if (n.MaxVolumes > 0) caps.push(`max ${n.MaxVolumes} volumes`);
    const segments = n.AccessibleTopology?.Segments;
    if (segments && Object.keys(segments).length > 0)
      caps.push(
        `topology ${Object.entries(segments)
          .map(([k, v]) => `${k}=${v}`)
          .join(",")}`,
      );
  }
  if (caps.length === 0) return <span class="muted">none</span>;
  return (
    <span class="caps">
      {caps.map((x) => (
        <code key={x}>{x}</code>
      ))}
    </span>
  );
}
