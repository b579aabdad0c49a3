/**
 * The exec driver's init script, run by `/bin/sh` as the first process of the task's new mount
 * namespace (`unshare --mount --propagation unchanged`):
 *
 *   sh -c EXEC_INIT_SH sh ROOT STATUS_FILE STARTED_FILE N USERSPEC GROUPS PARENT
 *         KIND SRC DEST RO  (N times)  COMMAND ARGS...
 *
 * 1. Makes PARENT, the mount holding ROOT (the driver finds it in mountinfo), private in this
 *    namespace, so nothing mounted under the task dir propagates to the host. The namespace was
 *    created with propagation unchanged, so copies of shared host mounts (a CSI plugin's
 *    directory) stay in the host's peer groups.
 * 2. Performs the plan (mount_plan.ts), creating each mount point inside ROOT and refusing any
 *    destination that resolves through a symlink (NO_LINKS_SH, then MOUNT_ENTRY_SH).
 * 3. Reports "ok" (or the error) on fd 3, the driver's setup channel, and closes it.
 * 4. Waits for the agent's "go" on stdin and records it in STARTED_FILE (start_gate.ts): the agent
 *    says go only once the task's handle is persisted; on EOF (the agent died) it runs nothing.
 * 5. Runs COMMAND chrooted into ROOT in the foreground and records its status in STATUS_FILE. With
 *    USERSPEC ("uid:gid", numeric) non-empty, chroot drops to that user and to GROUPS (numeric,
 *    comma-separated supplementary groups) before it runs COMMAND; empty: as the agent's user.
 *
 * The parent shell stays (instead of exec'ing the task) so a restarted agent can learn the exit
 * status from STATUS_FILE. It does not need to forward signals: stop() signals the whole process
 * group, which reaches the task directly; the parent's own traps only keep it alive to record the
 * status (traps with an action are reset to default in the child, so the task sees normal signal
 * dispositions, unlike a background job whose SIGINT the shell would ignore).
 *
 * Variables are prefixed `__berth_` because the script runs with the task's environment, which it
 * must pass through untouched. Tools are found through a fixed system PATH; the task's own PATH is
 * restored only for the chroot command.
 */
import { PARENT_TRAPS_SH, RECORD_STATUS_SH } from "../shared/process_table.js";
import { AWAIT_GO_SH } from "../shared/start_gate.js";

/**
 * Defines `__berth_mnt`: `mount` with `-o ro` added when `$__berth_ro` is "ro"; and
 * `__berth_bind_devices`: the minimal /dev's device nodes as binds of the host's, for a host where
 * root may not make them with mknod (a user namespace), as libcontainer does there.
 */
export const MOUNT_HELPERS_SH = `__berth_mnt() {
  if [ "$__berth_ro" = ro ]; then mount -o ro "$@"; else mount "$@"; fi
}
__berth_bind_devices() {
  for __berth_d in null zero full random urandom tty; do
    { [ -e "$__berth_target/$__berth_d" ] || : >"$__berth_target/$__berth_d"; } &&
      mount --bind -- "/dev/$__berth_d" "$__berth_target/$__berth_d" || return 1
  done
}`;

/**
 * Defines `__berth_no_links`: fails (status 1) when a component of `$__berth_root$__berth_dst`
 * below the root exists and is a symlink. The root is canonical and DEST normalised (absolute,
 * single slashes, no '.' or '..': mount_plan.ts), so this is `readlink -m` of the target differing
 * from it, answered by the shell's own `test`: no process per mount entry.
 */
export const NO_LINKS_SH = `__berth_no_links() {
  __berth_walk=$__berth_root
  __berth_rest=\${__berth_dst#/}
  while [ -n "$__berth_rest" ]; do
    __berth_walk=$__berth_walk/\${__berth_rest%%/*}
    case $__berth_rest in
    */*) __berth_rest=\${__berth_rest#*/} ;;
    *) __berth_rest= ;;
    esac
    if [ -L "$__berth_walk" ]; then return 1; fi
  done
  return 0
}`;

/**
 * One plan entry, shared with the mount refresh (mount_refresh.ts): creates the mount point
 * `$__berth_target` (= ROOT + `$__berth_dst`) inside the root, refuses it when it resolves through
 * a symlink, mounts `$__berth_src` there as `$__berth_kind` says (mount_plan.ts PlanKind) and makes
 * it read-only when `$__berth_ro` is "ro". Calls `__berth_fail` (which must exit) on any error;
 * needs `__berth_mnt` (MOUNT_HELPERS_SH) defined.
 *
 * Few processes per entry, because a task's setup runs one entry after another and 100 tasks
 * starting at once on a small node spend their time in fork/exec: a bind, its propagation and its
 * read-only flag are one `mount` call (util-linux ≥ 2.27 remounts a bind read-only itself, and
 * applies --make-* after the mount); a mount point that already exists (the driver makes the
 * top-level ones: mount_plan.ts premakeMountPoints) costs no `mkdir`; a directory destination is
 * checked for symlinks by the shell itself (`cd -P` sets PWD to the physical path; no `readlink`
 * process), then it returns to `/`; the minimal /dev's device nodes are one `cp -a` (binds only
 * where mknod is refused).
 */
export const MOUNT_ENTRY_SH = `  if [ -d "$__berth_src" ]; then
    [ -d "$__berth_target" ] || mkdir -p -- "$__berth_target"
  else
    mkdir -p -- "\${__berth_target%/*}" && { [ -e "$__berth_target" ] || : >"$__berth_target"; }
  fi || __berth_fail "cannot create mount point $__berth_dst"
  if [ -d "$__berth_target" ] && [ ! -L "$__berth_target" ]; then
    { cd -P -- "$__berth_target" 2>/dev/null && [ "$PWD" = "$__berth_target" ]; } ||
      __berth_fail "mount destination $__berth_dst resolves through a symlink"
    cd /
  elif [ "$(readlink -f -- "$__berth_target")" != "$__berth_target" ]; then
    __berth_fail "mount destination $__berth_dst resolves through a symlink"
  fi
  case $__berth_kind in
  bind) __berth_mnt --bind --make-private -- "$__berth_src" "$__berth_target" ;;
  rbind-private) __berth_mnt --rbind --make-rprivate -- "$__berth_src" "$__berth_target" ;;
  rbind-slave) __berth_mnt --rbind --make-rslave -- "$__berth_src" "$__berth_target" ;;
  bidirectional) __berth_mnt --rbind -- "$__berth_src" "$__berth_target" ;;
  sysfs) mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$__berth_target" ;;
  dev-minimal) mount -t tmpfs -o nosuid,mode=755 berth-dev "$__berth_target" && {
    { cp -a -- /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty "$__berth_target/" 2>/dev/null ||
      __berth_bind_devices; } &&
      mkdir -- "$__berth_target/pts" "$__berth_target/shm" &&
      mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$__berth_target/pts" &&
      ln -s pts/ptmx "$__berth_target/ptmx" &&
      mount -t tmpfs -o nosuid,nodev,mode=1777 shm "$__berth_target/shm" &&
      ln -s /proc/self/fd "$__berth_target/fd" && ln -s /proc/self/fd/0 "$__berth_target/stdin" &&
      ln -s /proc/self/fd/1 "$__berth_target/stdout" && ln -s /proc/self/fd/2 "$__berth_target/stderr"
  } ;;
  *) __berth_fail "unknown mount kind $__berth_kind" ;;
  esac || __berth_fail "cannot mount $__berth_src at $__berth_dst"
  case $__berth_kind in
  sysfs | dev-minimal)
    if [ "$__berth_ro" = ro ]; then
      mount -o remount,bind,ro -- "$__berth_target" || __berth_fail "cannot make $__berth_dst read-only"
    fi ;;
  esac`;

export const EXEC_INIT_SH = `__berth_root=$1
__berth_status_file=$2
__berth_started_file=$3
__berth_n=$4
__berth_userspec=$5
__berth_groups=$6
__berth_parent=$7
shift 7
__berth_task_path=$PATH
PATH=/usr/sbin:/usr/bin:/sbin:/bin
exec 4>&2 2>&3
__berth_fail() {
  printf '%s\\n' "$*" >&3
  exit 125
}
${MOUNT_HELPERS_SH}
${NO_LINKS_SH}
mount --make-private "$__berth_parent" || __berth_fail "cannot make $__berth_parent private in the task namespace"
__berth_i=0
while [ "$__berth_i" -lt "$__berth_n" ]; do
  __berth_kind=$1
  __berth_src=$2
  __berth_dst=$3
  __berth_ro=$4
  shift 4
  __berth_i=$((__berth_i + 1))
  __berth_target=$__berth_root$__berth_dst
  __berth_no_links || __berth_fail "mount destination $__berth_dst resolves through a symlink"
${MOUNT_ENTRY_SH}
done
__berth_chroot=
for __berth_c in /usr/sbin/chroot /usr/bin/chroot /sbin/chroot /bin/chroot; do
  if [ -x "$__berth_c" ]; then __berth_chroot=$__berth_c; break; fi
done
[ -n "$__berth_chroot" ] || __berth_fail "chroot not found"
printf 'ok\\n' >&3
exec 2>&4 3>&- 4>&-
${AWAIT_GO_SH}
${PARENT_TRAPS_SH}
if [ -n "$__berth_userspec" ]; then
  PATH=$__berth_task_path "$__berth_chroot" --userspec="$__berth_userspec" --groups="$__berth_groups" "$__berth_root" "$@"
else
  PATH=$__berth_task_path "$__berth_chroot" "$__berth_root" "$@"
fi
__berth_status=$?
${RECORD_STATUS_SH}`;
