/** The etcd3 client as the etcd store uses it: its fault handling, and error wording. */
import { Etcd3, isRecoverableError, type IOptions } from "etcd3";

/**
 * The watch stream's reconnect delays (the etcd3 client's `faultHandling.watchBackoff`, cockatiel's
 * IBackoff shape): doubling from `first` up to `cap` ms, so a watch is back within about `cap` of
 * etcd returning (the client's default waits up to 30 s).
 */
export class CappedBackoff {
  constructor(
    private readonly first: number,
    private readonly cap: number,
    readonly duration: number = first,
  ) {}

  next(): CappedBackoff {
    return new CappedBackoff(
      this.first,
      this.cap,
      Math.min(this.cap, Math.max(this.first, this.duration * 2)),
    );
  }
}

/** The cause of an etcd failure in one short line (gRPC status text, no stack, no request). */
export function describeEtcdError(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  // grpc-js appends a "Resolution note:" (name resolution details) that says nothing to an operator.
  const line = msg
    .split("\n")[0]!
    .replace(/\s*Resolution note:.*$/, "")
    .trim();
  if (/deadline/i.test(line)) return "no answer before the request deadline";
  if (/circuit/i.test(line)) return "recent requests failed; the client is waiting before trying again";
  return line.length > 200 ? `${line.slice(0, 200)}…` : line || "unknown error";
}

type FaultHandling = NonNullable<IOptions["faultHandling"]>;

/**
 * The client's global policy: each call is tried once per endpoint (the client moves to the next
 * member when one fails recoverably), never more. The store's commit loop decides what an
 * unanswered commit means (etcd_store.ts recognises its own entry by ID), and a caller hears about
 * an unreachable etcd after one deadline per endpoint instead of the client's default three tries.
 * Only `execute` is called on it (etcd3's connection pool).
 */
function oncePerEndpoint(endpoints: number): FaultHandling["global"] {
  const policy = {
    async execute<T>(fn: (context: { attempt: number }) => PromiseLike<T> | T): Promise<T> {
      for (let attempt = 0; ; attempt++) {
        try {
          return await fn({ attempt });
        } catch (err) {
          if (attempt + 1 >= endpoints || !(err instanceof Error && isRecoverableError(err))) throw err;
        }
      }
    },
  };
  return policy as unknown as FaultHandling["global"];
}

/** An etcd3 client for the store: a deadline on every unary call, quick watch reconnects. */
export function createEtcdClient(endpoints: string[], requestTimeoutMs: number): Etcd3 {
  return new Etcd3({
    hosts: endpoints,
    dialTimeout: requestTimeoutMs,
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + requestTimeoutMs }),
    faultHandling: {
      global: oncePerEndpoint(endpoints.length),
      watchBackoff: new CappedBackoff(100, 2_000),
    },
    // A catch-up reads up to 16 log entries of up to 1 MiB each at once (log.ts).
    grpcOptions: { "grpc.max_receive_message_length": 64 * 1024 * 1024 },
  });
}
