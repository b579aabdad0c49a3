/**
 * The environment a root helper of a task may run with. A task's environment is the job's to set
 * (its `env` block) or the task's own (read back from its process for `alloc exec`); root helpers
 * (the exec driver's setup shell and unshare, nsenter, the cgroup gate) must not load code
 * through it, so these variables reach only the task's command, after the privilege drop.
 */
/**
 * Variables that make a program run as root load or read code or data the task chose: glibc's
 * list of those it ignores for setuid programs (UNSECURE_ENVVARS: the loader's LD_*, GCONV_PATH,
 * LOCPATH, …) and those a shell imports functions or startup files from. The task's environment
 * is read from its process, which the task can rewrite at will, so root must never run with these.
 */
const UNSAFE_FOR_ROOT =
  /^(LD_[A-Z_]*|GCONV_PATH|GETCONF_DIR|HOSTALIASES|LOCALDOMAIN|LOCPATH|MALLOC_[A-Z_]*|NIS_PATH|NLSPATH|RESOLV_HOST_CONF|RES_OPTIONS|TMPDIR|TZDIR|BASH_FUNC_.*|BASH_ENV|ENV|SHELLOPTS|BASHOPTS)$/;

/** `env` without UNSAFE_FOR_ROOT (safe), and those as `NAME=value` words (carried). */
export function rootSafeEnv(env: Record<string, string>): {
  safe: Record<string, string>;
  carried: string[];
} {
  const safe: Record<string, string> = {};
  const carried: string[] = [];
  for (const [k, v] of Object.entries(env)) {
    if (UNSAFE_FOR_ROOT.test(k)) carried.push(`${k}=${v}`);
    else safe[k] = v;
  }
  return { safe, carried };
}
