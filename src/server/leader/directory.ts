/**
 * Mirrors of etcd prefixes, and the node directory built on them.
 *
 * PrefixMirror keeps an in-memory copy of every key under a prefix: read whole when its watch
 * (re)connects, then kept by the watch's put/delete events. Readers get a synchronous answer (the
 * controller client filters candidates synchronously), which may lag etcd by a watch event.
 *
 * NodeDirectory records which server holds each node agent's connection: this server writes an
 * entry bound to its own lease when a node registers on it, deletes it (only if it still names
 * this server) when the connection closes, and writes all of them again under each new lease.
 */
import type { Etcd3, Watcher } from "etcd3";
import type { Logger } from "../../internal/log.js";

export class PrefixMirror {
  private readonly entries = new Map<string, string>();
  private watcher: Watcher | null = null;
  private synced = false;

  constructor(
    private readonly client: Etcd3,
    private readonly prefix: string,
    private readonly log: Logger,
  ) {}

  /** Starts the watch; resolves after the first full read (rejects when etcd cannot be read). */
  async start(): Promise<void> {
    const watcher = this.client.watch().prefix(this.prefix).watcher();
    this.watcher = watcher;
    watcher.on("connected", () => void this.reload().catch(() => undefined));
    watcher.on("put", (kv) => this.entries.set(this.name(kv.key), kv.value.toString("utf8")));
    watcher.on("delete", (kv) => this.entries.delete(this.name(kv.key)));
    watcher.on("error", (err) =>
      this.log.warn("etcd watch failed", { prefix: this.prefix, error: err.message }),
    );
    await this.reload();
  }

  async stop(): Promise<void> {
    await this.watcher?.cancel().catch(() => undefined);
    this.watcher = null;
  }

  get(name: string): string | undefined {
    return this.entries.get(name);
  }

  /** Every entry, by the key's name below the prefix. */
  all(): ReadonlyMap<string, string> {
    return this.entries;
  }

  get isSynced(): boolean {
    return this.synced;
  }

  private async reload(): Promise<void> {
    const all = await this.client.getAll().prefix(this.prefix).strings();
    this.entries.clear();
    for (const [k, v] of Object.entries(all)) this.entries.set(this.name(k), v);
    this.synced = true;
  }

  private name(key: Buffer | string): string {
    return key.toString().slice(this.prefix.length);
  }
}

export class NodeDirectory {
  private readonly local = new Set<string>();
  private leaseId = "";

  constructor(
    private readonly client: Etcd3,
    private readonly prefix: string,
    private readonly selfId: string,
    readonly mirror: PrefixMirror,
    private readonly log: Logger,
  ) {}

  /** The server holding the node's connection, as etcd last said; undefined when none does. */
  serverOf(nodeId: string): string | undefined {
    return this.mirror.get(nodeId);
  }

  /** Nodes whose connection another server holds. */
  *heldElsewhere(): Iterable<string> {
    for (const [node, server] of this.mirror.all()) if (server !== this.selfId) yield node;
  }

  /** A node registered its connection here. */
  connected(nodeId: string): void {
    this.local.add(nodeId);
    void this.write(nodeId);
  }

  /** The node's connection here closed. */
  disconnected(nodeId: string): void {
    this.local.delete(nodeId);
    const key = this.prefix + nodeId;
    void this.client
      .if(key, "Value", "==", this.selfId)
      .then(this.client.delete().key(key))
      .commit()
      .catch((err: unknown) =>
        // The entry dies with this server's lease anyway.
        this.log.warn("could not remove a node's directory entry", { node: nodeId, error: err }),
      );
  }

  /** A new lease: every local entry is written again, bound to it. */
  rebind(leaseId: string): void {
    this.leaseId = leaseId;
    for (const nodeId of this.local) void this.write(nodeId);
  }

  private async write(nodeId: string): Promise<void> {
    const leaseId = this.leaseId;
    // Without a lease (between sessions) the next rebind writes it.
    if (leaseId === "") return;
    try {
      await this.client
        .put(this.prefix + nodeId)
        .value(this.selfId)
        .lease(leaseId);
    } catch (err) {
      this.log.warn("could not record a node's connection in etcd", { node: nodeId, error: err });
    }
  }
}
