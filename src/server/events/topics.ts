/**
 * Event stream topics and the subscription filter, as Nomad's (nomad/structs/event.go,
 * command/agent/event_endpoint.go parseEventTopics, nomad/stream/subscription.go filter):
 *
 * - `?topic=Topic:Key`, repeatable; `Topic` alone means `Topic:*`; no `topic` at all means `*:*`.
 *   A key matches an event whose Key or one of whose FilterKeys equals it; `*` matches every event
 *   of the topic, and topic `*` every topic.
 * - berth answers 400 for a topic name Nomad does not have (Nomad accepts any name and simply never
 *   matches it), so a typo is told, not silently streamed as nothing; the names Nomad has that berth
 *   never emits (NodePool, Service, ...) are accepted and match nothing.
 * - Namespaces: an event with a namespace passes only when it is one of the subscription's
 *   (`?namespace=`, default "default"; `*`: every namespace that exists when it subscribes); an
 *   event without one (nodes, plugins) always passes.
 */
import { validationError } from "../../structs/errors.js";

/** Topics berth emits. */
export const EMITTED_TOPICS = [
  "Job",
  "Allocation",
  "Evaluation",
  "Deployment",
  "Node",
  "CSIVolume",
  "CSIPlugin",
] as const;

/** Every topic name Nomad knows (nomad/structs/event.go), `*` included. */
export const KNOWN_TOPICS: readonly string[] = [
  "*",
  ...EMITTED_TOPICS,
  "NodePool",
  "ACLToken",
  "ACLPolicy",
  "ACLRole",
  "ACLAuthMethod",
  "ACLBindingRule",
  "Service",
  "HostVolume",
  "Operator",
  "Variable",
];

export type Topic = (typeof EMITTED_TOPICS)[number];

/** Topic → the keys asked for it. */
export type TopicKeys = Map<string, string[]>;

/** Parses the `topic` query parameters; a bad one is a 400 naming `topic`. */
export function parseTopics(raw: readonly string[]): TopicKeys {
  const topics: TopicKeys = new Map();
  if (raw.length === 0) {
    topics.set("*", ["*"]);
    return topics;
  }
  for (const t of raw) {
    const parts = t.split(":");
    if (parts.length > 2) {
      throw validationError("topic", `invalid key value pair for topic ${JSON.stringify(t)}: use Topic:Key`);
    }
    const [name = "", key = "*"] = parts;
    if (!KNOWN_TOPICS.includes(name)) {
      throw validationError(
        "topic",
        `unknown topic ${JSON.stringify(name)}; known topics: ${KNOWN_TOPICS.join(", ")}`,
      );
    }
    if (key === "") throw validationError("topic", `the key of ${JSON.stringify(t)} is empty; use * for all`);
    const keys = topics.get(name) ?? [];
    if (!keys.includes(key)) keys.push(key);
    topics.set(name, keys);
  }
  return topics;
}

/** What the filter reads of an event. */
export interface EventHeader {
  Topic: string;
  Key: string;
  Namespace: string;
  FilterKeys: readonly string[] | null;
}

export interface Subscription {
  topics: TopicKeys;
  /** The namespaces whose events pass; events without a namespace always pass. */
  namespaces: ReadonlySet<string>;
}

/** Whether `ev` is one the subscription asked for (each event at most once). */
export function matches(sub: Subscription, ev: EventHeader): boolean {
  if (ev.Namespace !== "" && !sub.namespaces.has(ev.Namespace)) return false;
  const keys = [...(sub.topics.get("*") ?? []), ...(sub.topics.get(ev.Topic) ?? [])];
  for (const key of keys) {
    if (key === "*" || key === ev.Key || (ev.FilterKeys?.includes(key) ?? false)) return true;
  }
  return false;
}
