/**
 * A task's `Resources` in Nomad's JSON → the canonical resources, as Nomad's
 * `Resources.Canonicalize` and `Resources.Validate` do: CPU 100 MHz and MemoryMB 300 when absent
 * (CPU 0 when `Cores` is set), at least 1 MHz and 10 MiB, `cpu` and `cores` exclusive, MemoryMaxMB
 * (oversubscription) not below MemoryMB. Networks, devices and NUMA are kept, not honoured. Pure.
 */
import { validationError } from "./errors.js";
import { checkFields, RESOURCES_FIELDS } from "./job_fields.js";
import { DEFAULT_TASK_CPU_MHZ, DEFAULT_TASK_MEMORY_MB, type Resources } from "./job_stanzas.js";
import { asObject, optNumber } from "./json_check.js";
import { keptList, keptObject } from "./kept_validate.js";

/** Nomad's MinResources. */
const MIN_CPU_MHZ = 1;
const MIN_MEMORY_MB = 10;

const int = (field: string, v: unknown) => optNumber(field, v, 0, { integer: true, min: 0 });

/** Resources for a task; `input` absent or null means Nomad's defaults. */
export function taskResources(field: string, input: unknown): Resources {
  const r = input === undefined || input === null ? {} : asObject(field, input);
  checkFields(field, r, RESOURCES_FIELDS);
  const coresSet = r.Cores !== undefined && r.Cores !== null;
  const cpuSet = r.CPU !== undefined && r.CPU !== null;
  const Cores = int(`${field}.Cores`, r.Cores);
  const CPU = cpuSet ? int(`${field}.CPU`, r.CPU) : coresSet ? 0 : DEFAULT_TASK_CPU_MHZ;
  const MemoryMB = optNumber(`${field}.MemoryMB`, r.MemoryMB, DEFAULT_TASK_MEMORY_MB, { integer: true });
  const MemoryMaxMB = int(`${field}.MemoryMaxMB`, r.MemoryMaxMB);
  if (Cores > 0 && CPU > 0) {
    throw validationError(field, "Task can only ask for 'cpu' or 'cores' resource, not both.");
  }
  if (Cores === 0 && CPU < MIN_CPU_MHZ) {
    throw validationError(`${field}.CPU`, `minimum CPU value is ${MIN_CPU_MHZ}; got ${CPU}`);
  }
  if (MemoryMB < MIN_MEMORY_MB) {
    throw validationError(`${field}.MemoryMB`, `minimum MemoryMB value is ${MIN_MEMORY_MB}; got ${MemoryMB}`);
  }
  if (MemoryMaxMB !== 0 && MemoryMaxMB < MemoryMB) {
    throw validationError(
      `${field}.MemoryMaxMB`,
      `MemoryMaxMB value (${MemoryMaxMB}) should be larger than MemoryMB value (${MemoryMB})`,
    );
  }
  const out: Resources = { CPU, Cores, MemoryMB, MemoryMaxMB };
  const DiskMB = int(`${field}.DiskMB`, r.DiskMB);
  if (DiskMB > 0) out.DiskMB = DiskMB;
  const SecretsMB = int(`${field}.SecretsMB`, r.SecretsMB);
  if (SecretsMB > 0) out.SecretsMB = SecretsMB;
  // IOPS: deprecated since Nomad 0.10 and ignored by Nomad itself; accepted for old clients.
  int(`${field}.IOPS`, r.IOPS);
  const Networks = keptList(`${field}.Networks`, r.Networks);
  if (Networks.length > 0) out.Networks = Networks;
  const Devices = keptList(`${field}.Devices`, r.Devices);
  if (Devices.length > 0) out.Devices = Devices;
  const NUMA = keptObject(`${field}.NUMA`, r.NUMA);
  if (NUMA) out.NUMA = NUMA;
  return out;
}
