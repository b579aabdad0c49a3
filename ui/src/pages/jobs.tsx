/** Jobs (`GET /v1/jobs?namespace=*`) and one job: its task groups, allocations, evaluations; stop. */
import { qs, seg, write } from "../api.js";
import { useBlocking } from "../blocking.js";
import { Badge, ConfirmAction, KV, Loaded, Page, Section, Table } from "../components.js";
import { ago, short } from "../format.js";
import { Link, paths } from "../router.js";
import type { AllocationListStub, Evaluation, Job, JobDeregisterResponse, JobListStub } from "../types.js";
import { AllocTable, EvalTable } from "./shared.js";

export function JobsPage() {
  const jobs = useBlocking<JobListStub[]>(`/v1/jobs${qs({ namespace: "*" })}`);
  return (
    <Page title="Jobs">
      <Loaded
        live={jobs}
        render={(list) => (
          <Table
            label="Jobs"
            rows={[...list].sort((a, b) => a.ID.localeCompare(b.ID))}
            rowKey={(j) => `${j.Namespace}/${j.ID}`}
            empty="No jobs. Run one with `berth job run FILE`."
            cols={[
              ["Name", (j) => <Link to={paths.job(j.ID, j.Namespace)}>{j.ID}</Link>],
              ["Namespace", (j) => j.Namespace],
              ["Type", (j) => j.Type],
              ["Priority", (j) => j.Priority],
              ["Status", (j) => <Badge value={j.Stop ? "stopped" : j.Status} />],
              ["Submitted", (j) => ago(j.SubmitTime)],
            ]}
          />
        )}
      />
    </Page>
  );
}

export function JobPage(props: { id: string; ns: string }) {
  const q = qs({ namespace: props.ns });
  const base = `/v1/job/${seg(props.id)}`;
  const job = useBlocking<Job>(`${base}${q}`);
  const allocs = useBlocking<AllocationListStub[]>(`${base}/allocations${q}`);
  const evals = useBlocking<Evaluation[]>(`${base}/evaluations${q}`);
  const stop = async () => {
    const res = await write<JobDeregisterResponse>("DELETE", `${base}${q}`);
    return `Job ${props.id} stopped (evaluation ${short(res.EvalID)}).`;
  };
  return (
    <Page title={`Job ${props.id}`} sub={`namespace ${props.ns}`}>
      <Loaded
        live={job}
        render={(j) => (
          <>
            <Section
              title="Overview"
              actions={
                // Stays mounted once the job is stopped, so its outcome stays on screen.
                <ConfirmAction
                  label="Stop job"
                  question={`Stop job ${j.ID}? Its allocations stop and release their volumes.`}
                  confirmLabel="Yes, stop job"
                  danger
                  disabled={j.Stop}
                  run={stop}
                />
              }
            >
              <KV
                items={[
                  ["Status", <Badge value={j.Stop ? "stopped" : j.Status} />],
                  ["Type", j.Type],
                  ["Priority", j.Priority],
                  ["Version", j.Version],
                  ["Datacenters", j.Datacenters.join(", ")],
                  ["Submitted", ago(j.SubmitTime)],
                  ["Deployments", <Link to={paths.deployments(j.ID, j.Namespace)}>Deployments</Link>],
                ]}
              />
            </Section>
            <Section title="Task groups">
              <Table
                label="Task groups"
                rows={j.TaskGroups}
                rowKey={(g) => g.Name}
                empty="No task groups."
                cols={[
                  ["Name", (g) => g.Name],
                  ["Count", (g) => g.Count],
                  ["Tasks", (g) => g.Tasks.map((t) => `${t.Name} (${t.Driver})`).join(", ")],
                  [
                    "Volumes",
                    (g) =>
                      Object.values(g.Volumes ?? {}).map((v) =>
                        v.Type === "csi" ? (
                          <Link key={v.Name} to={paths.volume(v.Source, j.Namespace)}>
                            {v.Source}
                          </Link>
                        ) : (
                          <span key={v.Name}>{v.Source} </span>
                        ),
                      ),
                  ],
                ]}
              />
            </Section>
          </>
        )}
      />
      <Section title="Allocations">
        <Loaded live={allocs} render={(list) => <AllocTable allocs={list} label="Allocations" />} />
      </Section>
      <Section title="Evaluations">
        <Loaded live={evals} render={(list) => <EvalTable evals={list} label="Evaluations" />} />
      </Section>
    </Page>
  );
}
