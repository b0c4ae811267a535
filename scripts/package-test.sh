#!/usr/bin/env bash
# Installs the Debian package built by scripts/package.sh in a fresh Debian 12
# (bookworm) chroot, with the dependencies it declares, and checks what a user
# of the package sees. Not part of scripts/test.sh or .ci/run: it needs root,
# the Debian mirror and a few minutes.
#   scripts/package-test.sh [PATH.deb]   (default: build-release/skillrunner_*_amd64.deb)
#   KEEP=1  leaves the chroot in build-release/package-test/root for a look
# The bookworm root (minbase + systemd, for `systemd-analyze verify`) is made
# once by debootstrap and cached as .deps/package-test/bookworm-systemd.tar.gz.
# Prints one PASS/FAIL line per check and exits 1 when any fails.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

DEB="${1:-$(ls -t build-release/skillrunner_*_amd64.deb 2>/dev/null | head -1)}"
[ -n "$DEB" ] && [ -f "$DEB" ] || { echo "package-test: no .deb (run scripts/package.sh first)" >&2; exit 2; }
DEB="$(cd "$(dirname "$DEB")" && pwd)/$(basename "$DEB")"
[ "$(id -u)" = 0 ] || { echo "package-test: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }

# The host's Debian mirror (deb822 or one-line sources), else deb.debian.org.
MIRROR="$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
  grep -v security | head -1 || true)"
[ -n "$MIRROR" ] || MIRROR="$(awk '$1 == "deb" && $0 !~ /security/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"

CACHE="$ROOT/.deps/package-test/bookworm-systemd.tar.gz"
WORK="$ROOT/build-release/package-test"
CHROOT="$WORK/root"

log() { echo "package-test: $*" >&2; }

make_base() {
  command -v debootstrap >/dev/null || {
    log "installing debootstrap"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >&2
  }
  local tmp="$WORK/base"
  rm -rf "$tmp"
  log "debootstrap bookworm (minbase + systemd) from $MIRROR into the cache (once)"
  debootstrap --variant=minbase --include=systemd bookworm "$tmp" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 ||
    { tail -20 "$WORK/debootstrap.log" >&2; exit 2; }
  echo "deb $MIRROR bookworm main" >"$tmp/etc/apt/sources.list"
  rm -rf "$tmp"/var/cache/apt/archives/*.deb "$tmp"/var/lib/apt/lists/*
  mkdir -p "$(dirname "$CACHE")"
  tar -C "$tmp" --numeric-owner -czf "$CACHE.tmp" . && mv "$CACHE.tmp" "$CACHE"
  rm -rf "$tmp"
}

MOUNTS=()
cleanup() {
  local i
  [ -z "${SERVE_PID:-}" ] || kill -KILL "$SERVE_PID" 2>/dev/null || true
  for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do umount -l "${MOUNTS[i]}" 2>/dev/null || true; done
  MOUNTS=()
  [ "${KEEP:-0}" = 1 ] && return
  # Never delete through a mount that is still there (the host's /dev).
  if grep -q " $CHROOT/" /proc/mounts; then log "$CHROOT still has mounts: left in place"; return; fi
  rm -rf --one-file-system "$CHROOT"
}

prepare_root() {
  cleanup
  rm -rf "$CHROOT"
  mkdir -p "$CHROOT"
  tar -C "$CHROOT" --numeric-owner -xzf "$CACHE"
  trap cleanup EXIT
  mount -t proc proc "$CHROOT/proc" && MOUNTS+=("$CHROOT/proc")
  mount --bind /dev "$CHROOT/dev" && MOUNTS+=("$CHROOT/dev")
  mount -t sysfs sysfs "$CHROOT/sys" && MOUNTS+=("$CHROOT/sys")
  cp /etc/resolv.conf "$CHROOT/etc/resolv.conf"
  # No service starts inside the chroot.
  printf '#!/bin/sh\nexit 101\n' >"$CHROOT/usr/sbin/policy-rc.d" && chmod 755 "$CHROOT/usr/sbin/policy-rc.d"
  cp "$DEB" "$CHROOT/tmp/"
}

in_root() { chroot "$CHROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }

PASSED=0
FAILED=0
# check NAME COMMAND...: runs COMMAND (output in $WORK/NAME.log), PASS on exit 0.
check() {
  local name="$1"; shift
  local out="$WORK/$name.log"
  : >"$out"
  if "$@" >>"$out" 2>&1; then
    PASSED=$((PASSED + 1)); printf 'PASS  %s\n' "$name"
  else
    FAILED=$((FAILED + 1)); printf 'FAIL  %s\n' "$name"; sed 's/^/      /' "$out" | tail -25
  fi
}

install_deb() {
  in_root apt-get update -qq &&
    in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      "/tmp/$(basename "$DEB")"
}

ETC=/etc/skillrunner
TREE=(--config "$ETC/skillrunner.yaml" --skills "$ETC/skills" --rubrics "$ETC/rubrics")
VERSION="$(dpkg-deb -f "$DEB" Version)"

version_matches() { in_root skillrunner --version | tee -a /dev/stderr | grep -qx "skillrunner $VERSION"; }
user_exists() {
  in_root id skillrunner && in_root getent group skillrunner &&
    [ "$(in_root stat -c %U:%G /var/lib/skillrunner)" = skillrunner:skillrunner ]
}
etc_tree() {
  local part
  for part in skillrunner.yaml skills rubrics evals; do in_root test -e "$ETC/$part" || { echo "missing $ETC/$part"; return 1; }; done
  in_root test -x /usr/bin/skillrunner && in_root test -f /usr/share/doc/skillrunner/docs/reference.md
}
# systemd-analyze verify prints nothing for a clean unit; any line fails.
verify_units() {
  local dir=/usr/lib/systemd/system out
  in_root ln -sf "$dir/skillrunner-eval@.service" /tmp/skillrunner-eval@nightly.service
  in_root ln -sf "$dir/skillrunner-eval@.timer" /tmp/skillrunner-eval@nightly.timer
  out="$(in_root env SYSTEMD_LOG_LEVEL=notice systemd-analyze verify "$dir/skillrunner.service" \
    /tmp/skillrunner-eval@nightly.service /tmp/skillrunner-eval@nightly.timer 2>&1)" || { echo "$out"; return 1; }
  echo "$out"
  [ -z "$out" ]
}
run_as_user() {
  in_root runuser -u skillrunner -- skillrunner --provider simulated "${TREE[@]}" run triage_ticket \
    --input '{"subject": "Checkout down", "body": "Every payment fails since 10:00."}' |
    tee -a /dev/stderr | grep -q '"priority"'
}
# The nightly unit's wrapper, as user skillrunner, on the calibration suite.
eval_wrapper() {
  local day; day="$(date -u +%Y-%m-%d)"
  in_root runuser -u skillrunner -- env SKILLRUNNER_PROVIDER=simulated /usr/libexec/skillrunner/eval-suite calibration || true
  in_root test -f "/var/lib/skillrunner/runs/calibration/$day/summary.json" &&
    in_root test -f /var/lib/skillrunner/history.sqlite &&
    [ "$(in_root stat -c %U "/var/lib/skillrunner/runs/calibration/$day/summary.json")" = skillrunner ]
}
# serve as skillrunner.service starts it (its ExecStart, as user skillrunner,
# in a network namespace of its own so port 9464 is free): the socket belongs
# to the group, health answers, SIGHUP (ExecReload) reloads, SIGTERM drains
# and exits 0.
SERVE_PID=""
# unit_commands FILE KEY: each KEY= command of a unit file, continuation lines joined.
unit_commands() {
  awk -v key="$2=" 'index($0, key) == 1 { cmd = substr($0, length(key) + 1); more = 1 }
    !(index($0, key) == 1) && more { cmd = cmd " " $0 }
    more { if (sub(/\\$/, "", cmd)) next; gsub(/  +/, " ", cmd); print cmd; more = 0 }' "$1"
}
as_user() { in_root setpriv --reuid=skillrunner --regid=skillrunner --init-groups "$@"; }
serve_as_unit() {
  local unit="$CHROOT/usr/lib/systemd/system/skillrunner.service" cmd sock=/run/skillrunner/skillrunner.sock i
  cmd="$(unit_commands "$unit" ExecStart)"
  cmd="${cmd//\$SKILLRUNNER_SERVE_ARGS/}"
  echo "ExecStart: $cmd"
  in_root install -d -o skillrunner -g skillrunner -m 0750 /run/skillrunner
  unshare --net sh -c "ip link set lo up && exec chroot '$CHROOT' env -i PATH=/usr/bin:/bin \
    setpriv --reuid=skillrunner --regid=skillrunner --init-groups $cmd" &
  SERVE_PID=$!
  for i in $(seq 50); do in_root test -S "$sock" && break; sleep 0.2; done
  [ "$(in_root stat -c %G:%a "$sock")" = skillrunner:660 ] || { in_root stat -c %G:%a "$sock"; return 1; }
  as_user skillrunner call --socket "$sock" health | tee -a /dev/stderr | grep -q '"status":"ok"' || return 1
  while IFS= read -r cmd; do
    echo "ExecReload: ${cmd//\$MAINPID/$SERVE_PID}"
    if [ "${cmd#/bin/kill}" != "$cmd" ]; then ${cmd//\$MAINPID/$SERVE_PID} || return 1
    else as_user $cmd || return 1; fi
  done < <(unit_commands "$unit" ExecReload)
  sleep 1
  as_user skillrunner call --socket "$sock" health | tee -a /dev/stderr | grep -q '"reloads":1' || return 1
  kill -TERM "$SERVE_PID"; wait "$SERVE_PID"; i=$?; SERVE_PID=""
  echo "serve exited $i"
  [ "$i" = 0 ] && ! in_root test -e "$sock"
}
# Reinstalling keeps an edited /etc/skillrunner; purging removes it and the state.
keeps_config() {
  echo "# edited by the administrator" >>"$CHROOT$ETC/skillrunner.yaml"
  in_root dpkg -i "/tmp/$(basename "$DEB")" && grep -q "edited by the administrator" "$CHROOT$ETC/skillrunner.yaml"
}
purge_cleans() {
  in_root env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q skillrunner &&
    ! in_root test -e "$ETC" && ! in_root test -e /var/lib/skillrunner && ! in_root test -e /etc/default/skillrunner
}

mkdir -p "$WORK"
[ -f "$CACHE" ] || make_base
prepare_root
log "installing $(basename "$DEB") with its dependencies from $MIRROR"
check install install_deb
if [ "$FAILED" = 0 ]; then
  echo "      depends: $(dpkg-deb -f "$DEB" Depends)"
  check version version_matches
  check installed-tree etc_tree
  check user-and-state-dir user_exists
  check validate in_root skillrunner "${TREE[@]}" validate
  check systemd-analyze-verify verify_units
  check run-as-skillrunner run_as_user
  check serve-as-unit serve_as_unit
  check eval-unit-wrapper eval_wrapper
  check reinstall-keeps-config keeps_config
  check purge-removes-tree purge_cleans
fi
echo "package-test: $PASSED passed, $FAILED failed ($(basename "$DEB"), bookworm chroot)"
[ "$FAILED" = 0 ] && echo "PASS" || { echo "FAIL"; exit 1; }
