/** The state store's tables (store.ts re-exports them): every record lives in one of these. */
export const TABLES = [
  "nodes",
  "jobs",
  "allocs",
  "volumes",
  "plugins",
  "evals",
  "intents",
  "deployments",
  "versions",
  "namespaces",
  "acl_policies",
  "acl_tokens",
] as const;
export type Table = (typeof TABLES)[number];
