/**
 * Nodes (Nomad's UI calls them clients): the list, and one node with its drivers, CSI plugins, host
 * volumes and allocations; drain it (Nomad's default deadline, 1h), stop a drain, and toggle its
 * scheduling eligibility.
 */
import { useState } from "preact/hooks";
import { seg, write } from "../api.js";
import { useBlocking } from "../blocking.js";
import { Badge, ConfirmAction, KV, Loaded, Page, Pairs, Section, Table } from "../components.js";
import { ago, short } from "../format.js";
import { Link, paths } from "../router.js";
import type { AllocationListStub, Node, NodeListStub, NodeUpdateResponse } from "../types.js";
import { AllocTable } from "./shared.js";

export function ClientsPage() {
  const nodes = useBlocking<NodeListStub[]>("/v1/nodes");
  return (
    <Page title="Clients">
      <Loaded
        live={nodes}
        render={(list) => (
          <Table
            label="Clients"
            rows={[...list].sort((a, b) => a.Name.localeCompare(b.Name))}
            rowKey={(n) => n.ID}
            empty="No nodes have registered."
            cols={[
              ["ID", (n) => <Link to={paths.client(n.ID)}>{short(n.ID)}</Link>],
              ["Name", (n) => n.Name],
              ["Datacenter", (n) => n.Datacenter],
              ["Class", (n) => n.NodeClass || "–"],
              ["Status", (n) => <Badge value={n.Status} title={n.StatusDescription} />],
              ["Eligibility", (n) => <Badge value={n.SchedulingEligibility} />],
              ["Drain", (n) => <Badge value={n.Drain === true ? "draining" : "no"} />],
            ]}
          />
        )}
      />
    </Page>
  );
}

/** Nomad's `node drain -enable` default deadline: one hour, in nanoseconds. */
const DRAIN_DEADLINES: [string, number][] = [
  ["1h (Nomad's default)", 3600e9],
  ["10m", 600e9],
  ["no deadline", 0],
  ["force: stop everything now", -1],
];

export function ClientPage(props: { id: string }) {
  const node = useBlocking<Node>(`/v1/node/${seg(props.id)}`);
  const allocs = useBlocking<AllocationListStub[]>(`/v1/node/${seg(props.id)}/allocations`);
  return (
    <Page title={`Client ${short(props.id)}`} sub={props.id}>
      <Loaded live={node} render={(n) => <NodeBody n={n} />} />
      <Section title="Allocations">
        <Loaded live={allocs} render={(list) => <AllocTable allocs={list} label="Allocations" showJob />} />
      </Section>
    </Page>
  );
}

function NodeBody(props: { n: Node }) {
  const n = props.n;
  const plugins = [
    ...Object.entries(n.CSIControllerPlugins ?? {}).map(([id, p]) => ({ id, kind: "controller", p })),
    ...Object.entries(n.CSINodePlugins ?? {}).map(([id, p]) => ({ id, kind: "node", p })),
  ];
  return (
    <>
      <Section title="Overview" actions={<NodeActions n={n} />}>
        <KV
          items={[
            ["Name", n.Name],
            ["Status", <Badge value={n.Status} title={n.StatusDescription} />],
            ["Eligibility", <Badge value={n.SchedulingEligibility} />],
            [
              "Drain",
              n.DrainStrategy ? <DrainText n={n} /> : n.LastDrain ? `last: ${n.LastDrain.Status}` : "no",
            ],
            ["Datacenter", n.Datacenter],
            ["Class", n.NodeClass || "–"],
            ["Meta", <Pairs map={n.Meta} />],
          ]}
        />
      </Section>
      <Section title="Drivers">
        <Table
          label="Drivers"
          rows={Object.entries(n.Drivers ?? {}).map(([name, d]) => ({ name, ...d }))}
          rowKey={(d) => d.name}
          empty="No drivers."
          cols={[
            ["Driver", (d) => d.name],
            ["Detected", (d) => <Badge value={d.Detected} />],
            ["Healthy", (d) => <Badge value={d.Healthy} />],
            ["Description", (d) => d.HealthDescription],
          ]}
        />
      </Section>
      <Section title="CSI plugins">
        <Table
          label="CSI plugins"
          rows={plugins}
          rowKey={(r) => `${r.kind}/${r.id}`}
          empty="No CSI plugins run on this node."
          cols={[
            ["Plugin", (r) => <Link to={paths.plugin(r.id)}>{r.id}</Link>],
            ["Type", (r) => r.kind],
            [
              "Healthy",
              (r) => <Badge value={r.p.Healthy ? "healthy" : "unhealthy"} title={r.p.HealthDescription} />,
            ],
            [
              "Allocation",
              (r) => (r.p.AllocID ? <Link to={paths.alloc(r.p.AllocID)}>{short(r.p.AllocID)}</Link> : "–"),
            ],
            ["Provider", (r) => `${r.p.Provider} ${r.p.ProviderVersion}`],
          ]}
        />
      </Section>
      <Section title="Host volumes">
        <Table
          label="Host volumes"
          rows={Object.values(n.HostVolumes ?? {})}
          rowKey={(h) => h.Name}
          empty="No host volumes."
          cols={[
            ["Name", (h) => h.Name],
            ["Path", (h) => <code>{h.Path}</code>],
            ["Read only", (h) => (h.ReadOnly ? "yes" : "no")],
          ]}
        />
      </Section>
    </>
  );
}

function DrainText(props: { n: Node }) {
  const d = props.n.DrainStrategy;
  if (!d) return <span>no</span>;
  const deadline =
    d.Deadline < 0 ? "forced" : d.Deadline === 0 ? "no deadline" : `deadline ${ago(d.ForceDeadline, "ns")}`;
  return (
    <span>
      <Badge value="draining" /> since {ago(d.StartedAt)}, {deadline}
    </span>
  );
}

function NodeActions(props: { n: Node }) {
  const n = props.n;
  const [deadline, setDeadline] = useState(DRAIN_DEADLINES[0]![1]);
  const path = `/v1/node/${seg(n.ID)}`;
  const draining = n.DrainStrategy !== undefined && n.DrainStrategy !== null;
  const eligible = n.SchedulingEligibility === "eligible";
  return (
    <>
      {draining ? (
        <ConfirmAction
          label="Stop drain"
          question={`Stop draining ${n.Name}? It stays ineligible until marked eligible.`}
          confirmLabel="Yes, stop drain"
          run={async () => {
            await write<NodeUpdateResponse>("POST", `${path}/drain`, {
              DrainSpec: null,
              MarkEligible: false,
            });
            return `Drain of ${n.Name} stopped.`;
          }}
        />
      ) : (
        <ConfirmAction
          label="Drain"
          question={`Drain ${n.Name}? Its allocations move to other nodes and it takes no new work.`}
          confirmLabel="Yes, drain"
          danger
          run={async () => {
            const body = { DrainSpec: { Deadline: deadline, IgnoreSystemJobs: false }, MarkEligible: false };
            await write<NodeUpdateResponse>("POST", `${path}/drain`, body);
            return `${n.Name} is draining.`;
          }}
        >
          <label class="inline">
            Deadline{" "}
            <select value={String(deadline)} onChange={(e) => setDeadline(Number(e.currentTarget.value))}>
              {DRAIN_DEADLINES.map(([label, ns]) => (
                <option key={label} value={String(ns)}>
                  {label}
                </option>
              ))}
            </select>
          </label>
        </ConfirmAction>
      )}
      <ConfirmAction
        label={eligible ? "Mark ineligible" : "Mark eligible"}
        question={eligible ? `Stop placing new work on ${n.Name}?` : `Let ${n.Name} take new work again?`}
        confirmLabel={eligible ? "Yes, mark ineligible" : "Yes, mark eligible"}
        run={async () => {
          const Eligibility = eligible ? "ineligible" : "eligible";
          await write<NodeUpdateResponse>("POST", `${path}/eligibility`, { Eligibility });
          return `${n.Name} is ${Eligibility}.`;
        }}
      />
    </>
  );
}
