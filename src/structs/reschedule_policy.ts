/**
 * The reschedule policy of a task group and the tracker on an alloc, as data. Apart from the rules
 * in reschedule.ts (which read jobs and allocs) so that job.ts and alloc.ts can hold them without
 * importing those rules back; reschedule.ts re-exports them.
 */
export type DelayFunction = "constant" | "exponential" | "fibonacci";
export const DELAY_FUNCTIONS: readonly DelayFunction[] = ["constant", "exponential", "fibonacci"];

export interface ReschedulePolicy {
  Attempts: number;
  /** Nanoseconds. */
  Interval: number;
  Delay: number;
  DelayFunction: DelayFunction;
  MaxDelay: number;
  Unlimited: boolean;
}

/** One reschedule, recorded on the replacement alloc. */
export interface RescheduleEvent {
  /** Unix nanoseconds of the reschedule. */
  RescheduleTime: number;
  PrevAllocID: string;
  PrevNodeID: string;
  /** Nanoseconds the replacement waited. */
  Delay: number;
}

export interface RescheduleTracker {
  Events: RescheduleEvent[];
}
