/** The CLI's own commands by noun and verb (the agent and the hostpath plugin dispatch apart). */
import type { Command, Parsed } from "../command.js";
import type { CommandIO } from "../io.js";
import { allocExec } from "./alloc_exec.js";
import { allocLogs } from "./alloc_logs.js";
import { allocFs } from "./alloc_fs.js";
import { allocRestart, allocSignal, allocStop } from "./alloc_ops.js";
import { allocStatus } from "./alloc_status.js";
import { evalList, evalStatus } from "./eval_status.js";
import { jobDispatch } from "./job_dispatch.js";
import { jobHistory } from "./job_history.js";
import { jobRevert } from "./job_revert.js";
import { jobScale } from "./job_scale.js";
import { deploymentList, deploymentStatus } from "./deployment_status.js";
import { deploymentFail, deploymentPause, deploymentPromote, deploymentResume } from "./deployment_ops.js";
import { jobPeriodic } from "./job_periodic.js";
import { jobInit } from "./job_init.js";
import { jobInspect } from "./job_inspect.js";
import { jobPlan } from "./job_plan.js";
import { jobRun } from "./job_run.js";
import { jobValidate } from "./job_validate.js";
import { jobStatus } from "./job_status.js";
import { jobStop } from "./job_stop.js";
import { namespaceApply } from "./namespace_apply.js";
import { namespaceDelete } from "./namespace_delete.js";
import { namespaceList, namespaceStatus } from "./namespace_status.js";
import { nodeDrain } from "./node_drain.js";
import { nodeEligibility } from "./node_eligibility.js";
import { nodeStatus } from "./node_status.js";
import { nodeIntroCreate } from "./node_intro_create.js";
import { operatorQuarantine } from "./operator_quarantine.js";
import { operatorRaft } from "./operator_raft.js";
import { operatorSnapshot } from "./operator_snapshot.js";
import { serverMembers } from "./server_members.js";
import { systemGc, systemReconcile } from "./system.js";
import { pluginStatus } from "./plugin_status.js";
import { volumeCreate } from "./volume_create.js";
import { volumeDelete } from "./volume_delete.js";
import { volumeDeregister } from "./volume_deregister.js";
import { volumeDetach } from "./volume_detach.js";
import { volumeInit } from "./volume_init.js";
import { volumeOrphans } from "./volume_orphans.js";
import { volumeSnapshot } from "./volume_snapshot.js";
import { volumeRegister } from "./volume_register.js";
import { volumeStatus } from "./volume_status.js";
import { tlsCaCreate } from "./tls_ca_create.js";
import { tlsCertCreate } from "./tls_cert_create.js";
import { aclPolicy } from "./acl_policy.js";
import { aclBootstrap, aclToken } from "./acl_token.js";

/** A command with its parse result kept inside, so commands of different types share one table. */
export interface Entry {
  usage: string;
  help: string;
  /** Parses argv (throws UsageError); the result knows the address and how to run. */
  prepare(argv: string[]): { address: string | undefined; run(io: CommandIO): Promise<number> };
}

function entry<P extends Parsed>(c: Command<P>): Entry {
  return {
    usage: c.usage,
    help: c.help,
    prepare(argv) {
      const parsed = c.parse(argv);
      return { address: parsed.address, run: (io) => c.run(parsed, io) };
    },
  };
}

export const COMMANDS: Record<string, Record<string, Entry>> = {
  job: {
    run: entry(jobRun),
    stop: entry(jobStop),
    status: entry(jobStatus),
    validate: entry(jobValidate),
    inspect: entry(jobInspect),
    init: entry(jobInit),
    plan: entry(jobPlan),
    history: entry(jobHistory),
    revert: entry(jobRevert),
    scale: entry(jobScale),
    dispatch: entry(jobDispatch),
    // `berth job periodic force`: the verb's own parse takes "force".
    periodic: entry(jobPeriodic),
  },
  alloc: {
    status: entry(allocStatus),
    logs: entry(allocLogs),
    fs: entry(allocFs),
    exec: entry(allocExec),
    stop: entry(allocStop),
    restart: entry(allocRestart),
    signal: entry(allocSignal),
  },
  eval: { status: entry(evalStatus), list: entry(evalList) },
  deployment: {
    list: entry(deploymentList),
    status: entry(deploymentStatus),
    promote: entry(deploymentPromote),
    fail: entry(deploymentFail),
    pause: entry(deploymentPause),
    resume: entry(deploymentResume),
  },
  node: {
    status: entry(nodeStatus),
    drain: entry(nodeDrain),
    eligibility: entry(nodeEligibility),
    // `berth node intro create`: the verb's own parse takes "create".
    intro: entry(nodeIntroCreate),
  },
  volume: {
    create: entry(volumeCreate),
    delete: entry(volumeDelete),
    register: entry(volumeRegister),
    deregister: entry(volumeDeregister),
    detach: entry(volumeDetach),
    init: entry(volumeInit),
    orphans: entry(volumeOrphans),
    snapshot: entry(volumeSnapshot),
    status: entry(volumeStatus),
  },
  plugin: { status: entry(pluginStatus) },
  operator: {
    quarantine: entry(operatorQuarantine),
    raft: entry(operatorRaft),
    snapshot: entry(operatorSnapshot),
  },
  server: { members: entry(serverMembers) },
  system: { gc: entry(systemGc), reconcile: entry(systemReconcile) },
  namespace: {
    apply: entry(namespaceApply),
    list: entry(namespaceList),
    status: entry(namespaceStatus),
    delete: entry(namespaceDelete),
  },
  // `berth tls ca create`, `berth tls cert create`: the verb's own parse takes "create".
  tls: { ca: entry(tlsCaCreate), cert: entry(tlsCertCreate) },
  acl: { bootstrap: entry(aclBootstrap), policy: entry(aclPolicy), token: entry(aclToken) },
};
