/** Record stamping shared by every StateStore implementation (store.ts's index contract). Pure. */

export type Indexed = { CreateIndex: number; ModifyIndex: number };

/** The record's JSON with its indexes left out, to tell a real change from a no-op put. */
export function contentOf(rec: object): string {
  return JSON.stringify({ ...rec, CreateIndex: 0, ModifyIndex: 0, AllocModifyIndex: 0, JobModifyIndex: 0 });
}

/** Stamps indexes on a record: CreateIndex kept from the previous version, ModifyIndex = now. */
export function stamp<T extends Indexed>(rec: T, prev: Indexed | undefined, idx: number): T {
  return { ...rec, CreateIndex: prev ? prev.CreateIndex : idx, ModifyIndex: idx };
}
