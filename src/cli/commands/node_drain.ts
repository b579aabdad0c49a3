/**
 * `berth node drain -enable|-disable|-monitor [options] <node>`: Nomad's node drain. Enabling marks
 * the node ineligible and moves its allocs off (CSI plugin allocs last, once the node's volumes are
 * released); without -detach it then follows the drain until it completes, printing Nomad's lines.
 */
import { parseDuration } from "../../api/index.js";
import type { Allocation, Node } from "../../api/index.js";
import { attempt, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import type { CommandIO } from "../io.js";
import { getByIdOrPrefix } from "../prefix.js";

/** Nomad's default drain deadline. */
const DEFAULT_DEADLINE_NS = 3600e9;
const DEFAULT_POLL_MS = 1000;

export interface NodeDrainArgs extends Parsed {
  node: string;
  /** "enable" starts or updates a drain, "disable" cancels it, "monitor" only follows one. */
  action: "enable" | "disable" | "monitor";
  /** Nanoseconds; 0 no deadline, -1 force. */
  deadlineNs: number;
  ignoreSystem: boolean;
  keepIneligible: boolean;
  detach: boolean;
  /** How often the monitor polls the node and its allocs. */
  pollMs: number;
}

export const nodeDrain: Command<NodeDrainArgs> = {
  usage: "Usage: berth node drain [options] <node>",
  help: "Toggles drain mode on a node (by ID or unique ID prefix). -enable marks the node ineligible and migrates its allocations: service and batch allocs first, then system allocs, and CSI plugin allocs last, once no volume claim is left on the node. -deadline <duration> (default 1h) bounds the drain: what is left then is stopped at once; -no-deadline waits forever; -force stops everything now. -ignore-system leaves system jobs' allocs running. Without -detach the command follows the drain until it completes (Ctrl-C stops following, not the drain); -monitor only follows. -disable cancels the drain and makes the node eligible again unless -keep-ineligible. -yes is accepted for Nomad compatibility: berth does not prompt.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      enable: { type: "boolean" },
      disable: { type: "boolean" },
      monitor: { type: "boolean" },
      deadline: { type: "string" },
      "no-deadline": { type: "boolean" },
      force: { type: "boolean" },
      "ignore-system": { type: "boolean" },
      "keep-ineligible": { type: "boolean" },
      detach: { type: "boolean" },
      yes: { type: "boolean" },
    });
    expectArgs(positionals, 1, 1, "<node>");
    const enable = values.enable ?? false;
    const disable = values.disable ?? false;
    const monitor = values.monitor ?? false;
    if ([enable, disable, monitor].filter(Boolean).length !== 1) {
      throw new UsageError("exactly one of -enable, -disable or -monitor is required");
    }
    const deadlineFlags = [values.deadline !== undefined, values["no-deadline"], values.force].filter(
      Boolean,
    );
    if (deadlineFlags.length > 1) {
      throw new UsageError("only one of -deadline, -no-deadline and -force may be given");
    }
    if (!enable && (deadlineFlags.length > 0 || values["ignore-system"])) {
      throw new UsageError("-deadline, -no-deadline, -force and -ignore-system go with -enable");
    }
    if (!disable && values["keep-ineligible"]) throw new UsageError("-keep-ineligible goes with -disable");
    if (monitor && values.detach) throw new UsageError("-detach cannot be used with -monitor");
    let deadlineNs = DEFAULT_DEADLINE_NS;
    if (values.deadline !== undefined) {
      const d = parseDuration(values.deadline);
      if (d === undefined || d <= 0) {
        throw new UsageError(
          `-deadline must be a positive duration (like 30m or 1h), got ${JSON.stringify(values.deadline)}`,
        );
      }
      deadlineNs = d;
    } else if (values["no-deadline"]) {
      deadlineNs = 0;
    } else if (values.force) {
      deadlineNs = -1;
    }
    return {
      address: values.address,
      node: positionals[0]!,
      action: enable ? "enable" : disable ? "disable" : "monitor",
      deadlineNs,
      ignoreSystem: values["ignore-system"] ?? false,
      keepIneligible: values["keep-ineligible"] ?? false,
      detach: values.detach ?? false,
      pollMs: DEFAULT_POLL_MS,
    };
  },
  run: async (p, io) => {
    let nodeId = "";
    const code = await attempt(io, "updating drain", async () => {
      const node = await resolveNode(io, p.node);
      nodeId = node.ID;
      if (p.action === "disable") {
        await io.api.nodes.updateDrain(node.ID, null, { markEligible: !p.keepIneligible });
        io.stdout(`Node ${JSON.stringify(node.ID)} drain strategy unset`);
        return;
      }
      if (p.action === "monitor") return;
      await io.api.nodes.updateDrain(node.ID, { Deadline: p.deadlineNs, IgnoreSystemJobs: p.ignoreSystem });
      if (p.detach) {
        io.stdout(`Node ${JSON.stringify(node.ID)} drain strategy set`);
        return;
      }
      io.stdout(`${stamp(io)}: Ctrl-C to stop monitoring: will not cancel the node drain`);
      io.stdout(`${stamp(io)}: Node ${JSON.stringify(node.ID)} drain strategy set`);
    });
    if (code !== 0 || p.action === "disable" || p.detach) return code;
    return attempt(io, "monitoring drain", () => monitorDrain(io, nodeId, p.pollMs));
  },
};

export async function resolveNode(io: CommandIO, id: string): Promise<Node> {
  return getByIdOrPrefix(
    id,
    "node",
    (nid) => io.api.nodes.info(nid),
    (prefix) => io.api.nodes.list({ prefix }),
  );
}

/** Nomad's monitor lines start with the time. */
function stamp(io: CommandIO): string {
  return new Date(io.now()).toISOString().replace(/\.\d{3}Z$/, "Z");
}

const isClientTerminal = (s: string) => s === "complete" || s === "failed" || s === "lost";
const migrating = (a: Allocation) => a.DesiredTransition?.Migrate === true;

/**
 * Follows the node's drain by polling the node and its allocs, printing a line per change of an
 * alloc the drain moves (marked for migration, draining, its client status once it stopped), then
 * "Drain complete", and returns once every alloc told to stop has stopped.
 */
export async function monitorDrain(io: CommandIO, nodeId: string, pollMs: number): Promise<void> {
  const quoted = JSON.stringify(nodeId);
  const seen = new Map<string, Allocation>();
  let complete = false;
  for (;;) {
    const node = await io.api.nodes.info(nodeId);
    const allocs = await io.api.nodes.allocations(nodeId);
    for (const a of allocs) {
      const prev = seen.get(a.ID);
      seen.set(a.ID, a);
      if (!migrating(a)) continue;
      const id = JSON.stringify(a.ID);
      if (!prev || !migrating(prev)) io.stdout(`${stamp(io)}: Alloc ${id} marked for migration`);
      if (a.DesiredStatus !== "run" && (!prev || prev.DesiredStatus === "run"))
        io.stdout(`${stamp(io)}: Alloc ${id} draining`);
      if (prev && prev.ClientStatus !== a.ClientStatus && isClientTerminal(a.ClientStatus))
        io.stdout(`${stamp(io)}: Alloc ${id} status ${prev.ClientStatus} -> ${a.ClientStatus}`);
    }
    if (!complete && !node.DrainStrategy) {
      const status = node.LastDrain?.Status;
      if (status !== "complete") {
        io.stdout(
          status === "canceled"
            ? `${stamp(io)}: Drain cancelled for node ${quoted}`
            : `${stamp(io)}: No drain strategy set for node ${quoted}`,
        );
        return;
      }
      io.stdout(`${stamp(io)}: Drain complete for node ${quoted}`);
      complete = true;
    }
    if (complete) {
      const stopping = allocs.filter((a) => a.DesiredStatus !== "run" && !isClientTerminal(a.ClientStatus));
      // Stopped before it ran: the agent has nothing to report for it.
      if (stopping.every((a) => a.ClientStatus === "pending")) {
        io.stdout(`${stamp(io)}: All allocations on node ${quoted} have stopped`);
        return;
      }
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
