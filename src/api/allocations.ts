/**
 * The allocation routes of the API client (Nomad's api/allocations.go, `Allocations()`):
 * `api.allocations.list()`, `api.allocations.info(id)`, ... The streamed routes (logs, exec) are
 * functions over the client in alloc_stream.ts and exec_session.ts.
 */
import { enc, listQuery, type ApiTransport, type ListOptions } from "./transport.js";
import type { Allocation, AllocationListStub, AllocResourceUsage } from "./types.js";

export class AllocationsApi {
  constructor(private readonly t: ApiTransport) {}

  /** `prefix` narrows to IDs starting with it (Nomad's `?prefix=`). */
  list(opts: ListOptions = {}): Promise<AllocationListStub[]> {
    return this.t.request("GET", "/v1/allocations", { query: listQuery(opts) });
  }
  info(id: string): Promise<Allocation> {
    return this.t.request("GET", `/v1/allocation/${enc(id)}`);
  }
  /** Stops the alloc and lets the scheduler replace it (Nomad's AllocStopResponse). */
  stop(id: string): Promise<{ EvalID: string; Index: number }> {
    return this.t.request("PUT", `/v1/allocation/${enc(id)}/stop`);
  }
  /** What the alloc's running tasks use now, measured on its node (Nomad's `Allocations().Stats`). */
  stats(id: string): Promise<AllocResourceUsage> {
    return this.t.request("GET", `/v1/client/allocation/${enc(id)}/stats`);
  }
  /** `task` "" signals every running task. */
  async signal(id: string, task: string, signal: string): Promise<void> {
    await this.t.request("PUT", `/v1/client/allocation/${enc(id)}/signal`, {
      body: { Task: task, Signal: signal },
    });
  }
  async restart(id: string, task: string, allTasks: boolean): Promise<void> {
    await this.t.request("PUT", `/v1/client/allocation/${enc(id)}/restart`, {
      body: { TaskName: task, AllTasks: allTasks },
    });
  }
}
