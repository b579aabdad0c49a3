/** Namespaces (Nomad's api.Namespace), as `GET /v1/namespaces` and `/v1/namespace/:name` answer. */

/** Task drivers (and network modes) a namespace's jobs may use; empty lists allow all. */
export interface NamespaceCapabilities {
  EnabledTaskDrivers: string[] | null;
  DisabledTaskDrivers: string[] | null;
  EnabledNetworkModes: string[] | null;
  DisabledNetworkModes: string[] | null;
}

export interface Namespace {
  Name: string;
  Description: string;
  Quota: string;
  Capabilities: NamespaceCapabilities | null;
  Meta: Record<string, string> | null;
  CreateIndex: number;
  ModifyIndex: number;
}

/** What `namespace apply` sends: the name, and whatever else the spec or flags set. */
export type NamespaceSpec = Partial<Omit<Namespace, "Name" | "CreateIndex" | "ModifyIndex">> & {
  Name: string;
};
