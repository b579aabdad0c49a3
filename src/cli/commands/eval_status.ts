/**
 * `berth eval status [<eval>]` and `berth eval list`: the scheduler's evaluations, and for one of
 * them why its allocs found no node ("Failed Placements"), as Nomad's `eval status` shows it.
 */
import type { Evaluation } from "../../api/index.js";
import type { Command } from "../command.js";
import { evalFailureStatus, failedPlacementLines, hasFailures } from "../evals.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import { ago, formatTimeNs, kv, orNone, shortId } from "../format.js";
import { getByIdOrPrefix } from "../prefix.js";
import { READ_FLAGS, showList, statusCommand, type ListView, type StatusArgs } from "../status.js";

function listView(filter: { job?: string; status?: string }): ListView<Evaluation> {
  return {
    doing: "querying evaluations",
    fetch: (io) => io.api.evaluations.list(filter),
    empty: "No evaluations found",
    columns: [
      "ID",
      "Priority",
      "Triggered By",
      "Job ID",
      "Namespace",
      "Node ID",
      "Status",
      "Placement Failures",
    ],
    row: (e, p) => [
      shortId(e.ID, p.verbose),
      String(e.Priority),
      e.TriggeredBy,
      e.JobID,
      e.Namespace,
      e.NodeID ? shortId(e.NodeID, p.verbose) : "<none>",
      e.Status,
      evalFailureStatus(e),
    ],
  };
}

export const evalStatus = statusCommand({
  usage: "Usage: berth eval status [options] [<evaluation>]",
  help: "Lists evaluations (newest first), or shows one (by ID or unique ID prefix) with the reasons its allocations found no node. -json prints the API's JSON, -t formats it with a Go template; -verbose shows full IDs, exact times and the linked evaluations.",
  what: "[<evaluation>]",
  list: listView({}),
  one: {
    doing: "querying evaluation",
    fetch: (id, io) =>
      getByIdOrPrefix(
        id,
        "evaluation",
        (eid) => io.api.evaluations.info(eid),
        (prefix) => io.api.evaluations.list({ prefix }),
      ),
    render: (ev, p, io) => evalLines(ev, p.verbose, io.now()),
  },
});

export interface EvalListArgs extends StatusArgs {
  job: string | undefined;
  status: string | undefined;
}

export const evalList: Command<EvalListArgs> = {
  usage: "Usage: berth eval list [options]",
  help: "Lists evaluations, newest first. -job and -status keep those of one job or in one status (blocked, complete, cancelled); -json prints the API's JSON, -t formats it with a Go template; -verbose shows full IDs.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      ...READ_FLAGS,
      job: { type: "string" },
      status: { type: "string" },
    });
    expectArgs(positionals, 0, 0, "none");
    return {
      address: values.address,
      id: undefined,
      json: values.json ?? false,
      template: values.t,
      verbose: values.verbose ?? false,
      job: values.job,
      status: values.status,
    };
  },
  run: (p, io) => showList(listView({ job: p.job, status: p.status }), p, io),
};

function evalLines(ev: Evaluation, verbose: boolean, nowMs: number): string[] {
  const time = (ns: number) => (verbose ? formatTimeNs(ns) : ago(ns / 1e6, nowMs));
  const pairs: [string, string][] = [
    ["ID", shortId(ev.ID, verbose)],
    ["Create Time", time(ev.CreateTime)],
    ["Modify Time", time(ev.ModifyTime)],
    ["Status", ev.Status],
    ["Status Description", ev.StatusDescription || ev.Status],
    ["Type", ev.Type],
    ["TriggeredBy", ev.TriggeredBy],
    ["Job ID", ev.JobID],
    ["Namespace", ev.Namespace],
    ["Priority", String(ev.Priority)],
    ["Placement Failures", evalFailureStatus(ev)],
  ];
  if (verbose) {
    pairs.push(
      ["Previous Eval", orNone(ev.PreviousEval)],
      ["Next Eval", orNone(ev.NextEval)],
      ["Blocked Eval", orNone(ev.BlockedEval)],
    );
  }
  const lines = kv(pairs);
  if (hasFailures(ev)) {
    lines.push("", "Failed Placements", ...failedPlacementLines(ev));
    if (ev.BlockedEval) {
      lines.push(
        "",
        `Evaluation ${JSON.stringify(shortId(ev.BlockedEval, verbose))} waiting for additional capacity to place remainder`,
      );
    }
  }
  return lines;
}
