/**
 * A job's deployments (Nomad's UI page /ui/jobs/<id>@<ns>/deployments), newest first, from
 * `GET /v1/job/:id/deployments`, kept live by one blocking query: each one's version, status and
 * why, and per task group desired, canaries, promoted, placed, healthy and unhealthy. An active
 * deployment offers Promote (when a group waits for promotion), Pause or Resume, and Fail, each
 * after a confirmation; a refusal (ACL, unhealthy canaries) shows the API's own text.
 */
import { qs, seg, write } from "../api.js";
import { useBlocking } from "../blocking.js";
import { Badge, ConfirmAction, KV, Loaded, Page, Section, Table } from "../components.js";
import { ago, short } from "../format.js";
import { Link, paths } from "../router.js";
import type { Deployment, DeploymentState, DeploymentUpdateResponse } from "../types.js";

/** How many of the job's deployments are shown (the server keeps more until GC). */
const SHOWN = 5;

const isActive = (d: Deployment) => d.Status === "running" || d.Status === "paused";
const awaitsPromotion = (s: DeploymentState) => s.DesiredCanaries > 0 && !s.Promoted;

export function DeploymentsPage(props: { id: string; ns: string }) {
  const q = qs({ namespace: props.ns });
  const list = useBlocking<Deployment[]>(`/v1/job/${seg(props.id)}/deployments${q}`);
  return (
    <Page title={`Deployments of ${props.id}`} sub={`namespace ${props.ns}`}>
      <p>
        <Link to={paths.job(props.id, props.ns)}>Back to job {props.id}</Link>
      </p>
      <Loaded
        live={list}
        render={(ds) =>
          ds.length === 0 ? (
            <p class="empty">No deployments. A service job with an update block gets one per version.</p>
          ) : (
            [...ds]
              .sort((a, b) => b.CreateIndex - a.CreateIndex)
              .slice(0, SHOWN)
              .map((d) => <DeploymentSection key={d.ID} d={d} q={q} />)
          )
        }
      />
    </Page>
  );
}

function DeploymentSection(props: { d: Deployment; q: string }) {
  const { d, q } = props;
  const groups = Object.entries(d.TaskGroups ?? {}).sort(([a], [b]) => a.localeCompare(b));
  const act = (what: string, path: string, body: Record<string, unknown>) => async () => {
    const res = await write<DeploymentUpdateResponse>("PUT", `/v1/deployment/${path}/${seg(d.ID)}${q}`, {
      DeploymentID: d.ID,
      ...body,
    });
    const ev = res.EvalID ? ` (evaluation ${short(res.EvalID)})` : "";
    return `Deployment ${short(d.ID)} ${what}${ev}.`;
  };
  const active = isActive(d);
  const promotable = d.Status === "running" && groups.some(([, s]) => awaitsPromotion(s));
  return (
    <Section
      title={`Deployment ${short(d.ID)}`}
      actions={
        active && (
          <>
            {promotable && (
              <ConfirmAction
                label="Promote"
                question={`Promote the canaries of deployment ${short(d.ID)}?`}
                confirmLabel="Yes, promote"
                run={act("promoted", "promote", { All: true })}
              />
            )}
            {d.Status === "running" ? (
              <ConfirmAction
                label="Pause"
                question={`Pause deployment ${short(d.ID)}? No more of it is placed until resumed.`}
                confirmLabel="Yes, pause"
                run={act("paused", "pause", { Pause: true })}
              />
            ) : (
              <ConfirmAction
                label="Resume"
                question={`Resume deployment ${short(d.ID)}?`}
                confirmLabel="Yes, resume"
                run={act("resumed", "pause", { Pause: false })}
              />
            )}
            <ConfirmAction
              label="Fail"
              question={`Fail deployment ${short(d.ID)}? With auto_revert the job rolls back to its last stable version.`}
              confirmLabel="Yes, fail deployment"
              danger
              run={act("failed", "fail", {})}
            />
          </>
        )
      }
    >
      <KV
        items={[
          ["ID", <code>{d.ID}</code>],
          ["Job version", d.JobVersion],
          ["Status", <Badge value={d.Status} />],
          ["Description", d.StatusDescription],
          ...(d.ModifyTime ? [["Updated", ago(d.ModifyTime)] as [string, string]] : []),
        ]}
      />
      <Table
        label={`Task groups of deployment ${short(d.ID)}`}
        rows={groups}
        rowKey={([g]) => g}
        empty="No task groups."
        cols={[
          ["Group", ([g]) => g],
          ["Desired", ([, s]) => s.DesiredTotal],
          ["Canaries", ([, s]) => s.DesiredCanaries],
          ["Promoted", ([, s]) => (s.DesiredCanaries > 0 ? <Badge value={s.Promoted} /> : "N/A")],
          ["Placed", ([, s]) => s.PlacedAllocs],
          ["Healthy", ([, s]) => s.HealthyAllocs],
          ["Unhealthy", ([, s]) => s.UnhealthyAllocs],
        ]}
      />
    </Section>
  );
}
