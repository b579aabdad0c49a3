/**
 * The loops only the leader runs, built fresh for each term (gate.ts), in their start order:
 * node liveness (every up node gets one TTL from now: the new leader's grace), the scheduler's
 * pass over every job (re-runs blocked evals and re-arms delayed follow-up evals), then the
 * volumewatcher (it resumes every unfinished release from the claim's checkpoint in the store),
 * the drainer, the deployment watcher, the periodic dispatcher (server/periodic/: it launches the
 * periodic jobs' children, and once the ticks missed while no leader ran), GC, the orphan
 * reconciler, the controller condition poll (ControllerGetVolume of volumes whose controller
 * reports conditions), the attachment reconciler (the provider's published nodes against
 * berth's claims: attachment_reconciler.ts) and the capacity poll (GetCapacity per plugin and
 * topology segment); the job volume loop (jobvolumes/: volumes from the jobspec, created on first
 * placement and deleted with a purged job) runs beside GC.
 *
 * Scheduler passes run on the leader alone: a follower sends its endpoints' passes and
 * "retry the blocked jobs" triggers to the leader (scheduler_front.ts), so the blocked set and the
 * follow-up timers exist in one place. These loops hold the local scheduler: what they start (a
 * drain, a lost node, a deployment step, a freed claim) is already on the leader. When this server
 * stops leading, the "blocked evals" loop's stop drops the blocked set and the timers
 * (Scheduler.standDown); a pass in flight finishes, its own transaction, and the next leader's
 * start-up pass rebuilds both from the store.
 *
 * Each loop is started with its LeaderTerm (gate.ts): the start-up pass over every job stops
 * between jobs once the term's signal aborts, and the loops that take a signal (the orphan
 * reconciler, the condition poll) end on it at once; every loop runs inside the term's fence, so
 * no server→node call of theirs is sent after the term ended (the volumewatcher's releases
 * included: they run in the watcher's loop, started inside the fence).
 */
import type { Logger } from "../../internal/log.js";
import type { Telemetry } from "../../internal/metrics/telemetry.js";
import { DeploymentWatcher, type DeploymentWatcherOptions } from "../deploymentwatcher/watcher.js";
import { NodeDrainer, type DrainerOptions } from "../drainer/drainer.js";
import { GarbageCollector, type GcOptions } from "../gc/collector.js";
import { JobVolumeLoop, type JobVolumeOptions } from "../jobvolumes/loop.js";
import { OrphanReconciler, type OrphanReconcilerOptions } from "../orphans/reconciler.js";
import { PeriodicDispatcher, type PeriodicDispatcherOptions } from "../periodic/dispatcher.js";
import type { KeyedMutex } from "../../internal/keyed_mutex.js";
import type { ControllerClient } from "../clientconn/controller.js";
import type { ClaimEndpoint } from "../rpc/claim.js";
import type { VolumeEndpoint } from "../rpc/volume.js";
import type { Scheduler } from "../scheduler/scheduler.js";
import type { StateStore } from "../state/store.js";
import { VolumeWatcher, type VolumeWatcherOptions } from "../volumewatcher/watcher.js";
import { ControllerConditionPoller, type ControllerConditionOptions } from "../volumecondition/poller.js";
import { AttachmentReconciler, type AttachmentReconcileOptions } from "./attachment_reconciler.js";
import type { PublishRefusals } from "./attachment_hints.js";
import { CapacityPoller, type CapacityPollOptions } from "../capacity/poller.js";
import type { LeaderLoop, LeaderTerm } from "./gate.js";
import type { ClusterLiveness } from "./liveness.js";

export interface LeaderLoopParts {
  store: StateStore;
  scheduler: Scheduler;
  claim: ClaimEndpoint;
  volumes: VolumeEndpoint;
  liveness: ClusterLiveness;
  log: Logger;
  volumeWatcher?: Partial<VolumeWatcherOptions>;
  gc?: Partial<GcOptions>;
  drainer?: Partial<DrainerOptions>;
  deploymentWatcher?: Partial<DeploymentWatcherOptions>;
  orphans?: Partial<OrphanReconcilerOptions>;
  /** The server→node controller path and the volume locks the condition poll uses. */
  controllers: ControllerClient;
  volumeLocks: KeyedMutex;
  controllerCondition?: Partial<ControllerConditionOptions>;
  capacity?: Partial<CapacityPollOptions>;
  periodic?: Partial<PeriodicDispatcherOptions>;
  attachmentReconcile?: Partial<AttachmentReconcileOptions>;
  /** Claims' refused ControllerPublish calls, which make the attachment reconciler run at once. */
  publishRefusals?: PublishRefusals;
  telemetry?: Telemetry;
  jobVolumes?: Partial<JobVolumeOptions>;
  /** Told of each term's volumewatcher when it starts, and of none once it stopped (its census feeds metrics). */
  onVolumeWatcher?: (watcher: VolumeWatcher | undefined) => void;
}

/** A loop whose `start` may take the term's signal (it then also stops when the term ends). */
function loop(name: string, part: { start(signal?: AbortSignal): void; stop(): Promise<void> }): LeaderLoop {
  return { name, start: (term: LeaderTerm) => part.start(term.signal), stop: () => part.stop() };
}

export function buildLeaderLoops(p: LeaderLoopParts): LeaderLoop[] {
  const { store, scheduler, log } = p;
  return [
    p.liveness.loop(),
    // A pass in flight finishes (its own transaction); the scheduler itself stops with the server.
    // The start-up pass stops between jobs when the term ends (the next leader's pass covers them).
    {
      name: "blocked evals",
      start: (term) => scheduler.evaluateAll(term.signal),
      stop: () => Promise.resolve(scheduler.standDown()),
    },
    volumeWatcherLoop(p),
    loop("drainer", new NodeDrainer(store, scheduler, log.child("drainer"), p.drainer)),
    loop(
      "deploymentwatcher",
      new DeploymentWatcher(store, scheduler, log.child("deploymentwatcher"), p.deploymentWatcher),
    ),
    // After the start-up pass: a child it launches is evaluated by the leader's own scheduler.
    new PeriodicDispatcher(store, scheduler, log.child("periodic"), p.periodic),
    loop("gc", new GarbageCollector(store, log.child("gc"), p.gc)),
    // Volumes from the jobspec: created on first placement, deleted with a purged job (jobvolumes/).
    loop("job volumes", new JobVolumeLoop(store, p.volumes, log.child("jobvolumes"), p.jobVolumes)),
    loop("orphans", new OrphanReconciler(p.volumes.orphans, log.child("orphans"), p.orphans)),
    loop(
      "controller condition",
      new ControllerConditionPoller(
        store,
        p.controllers,
        p.volumeLocks,
        log.child("controllercondition"),
        p.controllerCondition,
      ),
    ),
    loop(
      "attachment reconcile",
      new AttachmentReconciler(
        store,
        p.controllers,
        p.volumeLocks,
        log.child("attachmentreconcile"),
        p.attachmentReconcile,
        p.publishRefusals,
        p.telemetry,
      ),
    ),
    loop("capacity", new CapacityPoller(store, p.controllers, log.child("capacity"), p.capacity)),
  ];
}

function volumeWatcherLoop(p: LeaderLoopParts): LeaderLoop {
  const watcher = new VolumeWatcher(p.store, p.claim, p.log.child("volumewatcher"), p.volumeWatcher);
  return {
    name: "volumewatcher",
    start: () => {
      watcher.start();
      p.onVolumeWatcher?.(watcher);
    },
    stop: async () => {
      p.onVolumeWatcher?.(undefined);
      await watcher.stop();
    },
  };
}
