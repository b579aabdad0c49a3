/**
 * The plain reads of a write transaction (the StateReader half of SqliteWriter): each is the
 * reader's own on the same connection, so it sees the transaction's writes so far. Reads that must
 * first flush the transaction's pending plugin deltas stay in SqliteWriter.
 */
import type { SqliteReader } from "./engine.js";
import type { Table } from "../store.js";

export abstract class SqliteReadThrough {
  constructor(protected readonly r: SqliteReader) {}

  tableIndex(t: Table): number {
    return this.r.tableIndex(t);
  }
  getNode(id: string) {
    return this.r.getNode(id);
  }
  listNodes() {
    return this.r.listNodes();
  }
  getJob(ns: string, id: string) {
    return this.r.getJob(ns, id);
  }
  listJobs(ns?: string) {
    return this.r.listJobs(ns);
  }
  getAlloc(id: string) {
    return this.r.getAlloc(id);
  }
  listAllocs(ns?: string) {
    return this.r.listAllocs(ns);
  }
  allocsByNode(nodeId: string) {
    return this.r.allocsByNode(nodeId);
  }
  allocsByJob(ns: string, jobId: string) {
    return this.r.allocsByJob(ns, jobId);
  }
  hasLiveAllocOfJob(ns: string, jobId: string, jobCreateIndex: number) {
    return this.r.hasLiveAllocOfJob(ns, jobId, jobCreateIndex);
  }
  allocsByVolume(ns: string, volumeId: string) {
    return this.r.allocsByVolume(ns, volumeId);
  }
  getVolume(ns: string, id: string) {
    return this.r.getVolume(ns, id);
  }
  listVolumes(filter?: { namespace?: string; pluginId?: string }) {
    return this.r.listVolumes(filter);
  }
  getEval(id: string) {
    return this.r.getEval(id);
  }
  listEvals(ns?: string) {
    return this.r.listEvals(ns);
  }
  evalsByJob(ns: string, jobId: string) {
    return this.r.evalsByJob(ns, jobId);
  }
  getPeriodicLaunch(ns: string, id: string) {
    return this.r.getPeriodicLaunch(ns, id);
  }
  getDeployment(id: string) {
    return this.r.getDeployment(id);
  }
  listDeployments(ns?: string) {
    return this.r.listDeployments(ns);
  }
  deploymentsByJob(ns: string, jobId: string) {
    return this.r.deploymentsByJob(ns, jobId);
  }
  jobVersions(ns: string, jobId: string) {
    return this.r.jobVersions(ns, jobId);
  }
  getVolumeIntent(ns: string, id: string) {
    return this.r.getVolumeIntent(ns, id);
  }
  listVolumeIntents() {
    return this.r.listVolumeIntents();
  }
  getNamespace(name: string) {
    return this.r.getNamespace(name);
  }
  listNamespaces() {
    return this.r.listNamespaces();
  }
}
