#!/usr/bin/env bash
# Builds the quick start's image, berth/hostpath:local, with no registry: the host's node binary
# and the shared libraries it needs, a shell and mount(8), and this checkout's berth (bin/, dist/,
# proto/, node_modules/) at /berth, imported with `docker import`. On another node (air-gapped):
#   docker save berth/hostpath:local | ssh node2 docker load
# Run from the repository root after `npm ci && npx tsc -p tsconfig.json`.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
add() { # add <host path> [path in the image]
  local dest="$root${2:-$1}"
  mkdir -p "$(dirname "$dest")"
  ln -s "$(readlink -f "$1")" "$dest"
}
for bin in "$(command -v node)" /bin/dash "$(command -v mount)" "$(command -v umount)" \
  "$(command -v date)" "$(command -v sleep)" "$(command -v cat)"; do
  case "$bin" in
    */node) add "$bin" /usr/bin/node ;;
    */dash) add "$bin" /bin/sh ;;
    *) add "$bin" "/bin/$(basename "$bin")" ;;
  esac
  for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
    [ -e "$root$lib" ] || add "$lib" "$lib"
  done
done
for part in bin dist/src proto node_modules package.json; do add "$PWD/$part" "/berth/$part"; done
mkdir -p "$root/tmp" "$root/proc" "$root/sys" "$root/dev" "$root/etc"
chmod 1777 "$root/tmp"
tar -h -C "$root" -c . | docker import - berth/hostpath:local
