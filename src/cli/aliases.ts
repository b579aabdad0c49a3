/**
 * Nomad's top-level shortcuts (command/commands.go): `berth run job.hcl` is `berth job run
 * job.hcl`, `berth logs <alloc>` is `berth alloc logs <alloc>`, and so on, so a Nomad operator's
 * muscle memory and scripts work. `status` is not among them: Nomad's searches every kind of object
 * by ID prefix, which `berth job status` does not.
 */
export const ALIASES: Record<string, [noun: string, verb: string]> = {
  run: ["job", "run"],
  plan: ["job", "plan"],
  validate: ["job", "validate"],
  stop: ["job", "stop"],
  inspect: ["job", "inspect"],
  init: ["job", "init"],
  logs: ["alloc", "logs"],
  fs: ["alloc", "fs"],
  exec: ["alloc", "exec"],
  "alloc-status": ["alloc", "status"],
  "eval-status": ["eval", "status"],
  "node-status": ["node", "status"],
  "node-drain": ["node", "drain"],
  "server-members": ["server", "members"],
};

/** `argv` with a leading shortcut spelled out; anything else unchanged. */
export function expandAlias(argv: readonly string[]): string[] {
  const [first, ...rest] = argv;
  const target = first === undefined ? undefined : ALIASES[first];
  return target ? [...target, ...rest] : [...argv];
}
