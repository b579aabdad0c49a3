/** One allocation (`GET /v1/allocation/:id`): where it runs, its tasks' states and events, their logs. */
import { seg } from "../api.js";
import { useBlocking } from "../blocking.js";
import { Badge, KV, Loaded, Page, Section, Table } from "../components.js";
import { ago, short, when } from "../format.js";
import { Link, navigate, paths } from "../router.js";
import type { Allocation, TaskState } from "../types.js";
import { AllocStats } from "./alloc_stats.js";
import { TaskLogs } from "./logs.js";

export function AllocPage(props: { id: string; task?: string }) {
  const alloc = useBlocking<Allocation>(`/v1/allocation/${seg(props.id)}`);
  return (
    <Page title={`Allocation ${short(props.id)}`} sub={props.id}>
      <Loaded live={alloc} render={(a) => <AllocBody a={a} task={props.task} />} />
    </Page>
  );
}

function AllocBody(props: { a: Allocation; task?: string }) {
  const a = props.a;
  const group = a.Job?.TaskGroups?.find((g) => g.Name === a.TaskGroup);
  const taskNames = group?.Tasks.map((t) => t.Name) ?? Object.keys(a.TaskStates ?? {});
  const selected = props.task !== undefined && taskNames.includes(props.task) ? props.task : taskNames[0];
  const volumes = Object.values(group?.Volumes ?? {}).filter((v) => v.Type === "csi");
  return (
    <>
      <Section title="Overview">
        <KV
          items={[
            ["Job", <Link to={paths.job(a.JobID, a.Namespace)}>{a.JobID}</Link>],
            ["Task group", a.TaskGroup],
            ["Name", a.Name],
            [
              "Node",
              a.NodeID ? <Link to={paths.client(a.NodeID)}>{a.NodeName || short(a.NodeID)}</Link> : "–",
            ],
            ["Status", <Badge value={a.ClientStatus} />],
            ["Description", a.ClientDescription || "–"],
            ["Desired", `${a.DesiredStatus}${a.DesiredDescription ? ` (${a.DesiredDescription})` : ""}`],
            ["Created", when(a.CreateTime)],
            ["Modified", ago(a.ModifyTime)],
            [
              "CSI volumes",
              volumes.length === 0
                ? "none"
                : volumes.map((v) => (
                    <Link key={v.Name} to={paths.volume(v.Source, a.Namespace)}>
                      {v.Source}{" "}
                    </Link>
                  )),
            ],
          ]}
        />
      </Section>
      <Section title="Resource use">
        <AllocStats
          allocId={a.ID}
          running={a.ClientStatus === "running"}
          tasks={taskNames.map((name) => {
            const r = group?.Tasks.find((t) => t.Name === name)?.Resources;
            return { name, cpu: r?.CPU ?? undefined, memoryMB: r?.MemoryMB ?? undefined };
          })}
        />
      </Section>
      {taskNames.map((name) => (
        <TaskSection key={name} name={name} state={a.TaskStates?.[name]} />
      ))}
      {selected !== undefined && (
        <Section title="Logs">
          {taskNames.length > 1 && (
            <div class="tabs" role="tablist" aria-label="Tasks">
              {taskNames.map((t) => (
                <button
                  key={t}
                  type="button"
                  role="tab"
                  aria-selected={t === selected}
                  class={t === selected ? "tab tab-on" : "tab"}
                  onClick={() => navigate(`${paths.alloc(a.ID)}/${encodeURIComponent(t)}`, true)}
                >
                  {t}
                </button>
              ))}
            </div>
          )}
          <TaskLogs allocId={a.ID} task={selected} />
        </Section>
      )}
    </>
  );
}

function TaskSection(props: { name: string; state: TaskState | undefined }) {
  const s = props.state;
  return (
    <Section title={`Task ${props.name}`}>
      {s === undefined ? (
        <p class="empty">Not started yet.</p>
      ) : (
        <>
          <KV
            items={[
              ["State", <Badge value={s.Failed ? "failed" : s.State} />],
              ["Restarts", s.Restarts],
              ["Started", when(s.StartedAt)],
              ["Finished", when(s.FinishedAt)],
            ]}
          />
          <Table
            label={`Task ${props.name} events`}
            rows={(s.Events ?? []).map((e, i) => ({ ...e, i })).reverse()}
            rowKey={(e) => String(e.i)}
            empty="No events."
            cols={[
              ["Time", (e) => when(e.Time)],
              ["Type", (e) => e.Type],
              ["Description", (e) => e.DisplayMessage],
            ]}
          />
        </>
      )}
    </Section>
  );
}
