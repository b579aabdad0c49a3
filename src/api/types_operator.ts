/**
 * The HTTP API's operator shapes: the stored records the server quarantined because they could not
 * be loaded (`GET /v1/operator/quarantine`; berth's own, Nomad has no quarantine).
 * Part of the API's own DTOs (see types.ts); same conventions.
 */

export interface QuarantinedRecord {
  /** The state table it was stored in: nodes, jobs, allocs, volumes, evals or plugins. */
  Table: string;
  /** The record's namespace for jobs and volumes, "" otherwise. */
  Namespace: string;
  /** The record's ID as it was stored. */
  Key: string;
  /** Why it could not be loaded, naming the field. */
  Error: string;
  /** When it was quarantined, unix ns. */
  QuarantineTime: number;
}
