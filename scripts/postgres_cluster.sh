#!/usr/bin/env bash
# One throwaway PostgreSQL cluster for a ctest run (the postgres_cluster
# fixture): no durability (fsync, synchronous_commit and full_page_writes
# off), no network (a Unix socket only, trust auth on it), a superuser named
# skillrunner. Tests read DIR/env and create a fresh database each
# (tests/support/postgres_server.h).
#   postgres_cluster.sh start DIR   creates DIR, initdb, starts, waits (30 s), writes DIR/env
#   postgres_cluster.sh stop DIR    stops the server (fast) and removes DIR
# As root the server runs as nobody (PostgreSQL refuses to run as root);
# otherwise as the current user.
#   PG_BINDIR  overrides /usr/lib/postgresql/15/bin
set -euo pipefail

PG_BINDIR="${PG_BINDIR:-/usr/lib/postgresql/15/bin}"
PORT=5432
SUPERUSER=skillrunner
WAIT_S=30

die() {
  echo "postgres_cluster: $*" >&2
  exit 1
}

usage() {
  die "usage: postgres_cluster.sh start|stop DIR"
}

check_binaries() {
  local b
  for b in initdb pg_ctl pg_isready postgres psql createdb; do
    [ -x "$PG_BINDIR/$b" ] ||
      die "$PG_BINDIR/$b is missing: install postgresql (scripts/setup.sh does with WITH_TESTS=1)"
  done
}

# Runs a command as the cluster's owner; from /, as the current folder (say
# /root) may be closed to nobody and PostgreSQL's programs complain then.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd / && runuser -u nobody -- "$@")
  else
    "$@"
  fi
}

# Where the data, the socket and the log live: DIR itself, unless the server's
# user cannot reach DIR (a parent folder closed to nobody), or DIR is too long
# for a socket path (108 bytes with /.s.PGSQL.5432), or has characters that
# unix_socket_directories or DIR/env would need quoting for; then a short
# folder under /tmp that DIR/home names.
choose_home() {
  local dir="$1"
  if [ ${#dir} -le 90 ] && [[ "$dir" =~ ^[A-Za-z0-9_./-]+$ ]] && as_owner test -w "$dir" -a -x "$dir"; then
    echo "$dir"
  else
    local home
    home="$(mktemp -d /tmp/skillrunner-pg.XXXXXX)" || die "cannot create a folder under /tmp"
    [ "$(id -u)" -eq 0 ] && chown nobody "$home"
    echo "$home"
  fi
}

# The folder holding the cluster of DIR (see choose_home), or "" when none.
home_of() {
  local dir="$1"
  if [ -f "$dir/home" ]; then
    cat "$dir/home"
  elif [ -d "$dir/data" ]; then
    echo "$dir"
  fi
}

is_running() {
  local home="$1"
  [ -n "$home" ] && [ -f "$home/data/PG_VERSION" ] && as_owner "$PG_BINDIR/pg_ctl" status -D "$home/data" >/dev/null 2>&1
}

# DIR is removed only when this script made it (or it is empty), so a typo
# in DIR cannot delete someone's folder.
check_ours() {
  local dir="$1"
  [ -e "$dir" ] || return 0
  [ -d "$dir" ] || die "$dir exists and is not a folder"
  if [ -n "$(ls -A "$dir")" ] && [ ! -f "$dir/.postgres_cluster" ]; then
    die "$dir exists and was not made by postgres_cluster.sh; not touching it"
  fi
}

remove_cluster() {
  local dir="$1" home
  home="$(home_of "$dir")"
  # A server whose DIR/env is missing (a start cut short) must not outlive its files.
  if is_running "$home"; then as_owner "$PG_BINDIR/pg_ctl" stop -m immediate -D "$home/data" >/dev/null 2>&1 || true; fi
  if [ -n "$home" ] && [ "$home" != "$dir" ]; then rm -rf "$home"; fi
  rm -rf "$dir"
}

init_cluster() {
  local home="$1"
  # --no-locale: the C locale, whatever LANG names (a locale the machine may
  # not have would stop initdb); -N: no fsync of the new files.
  as_owner "$PG_BINDIR/initdb" -N -D "$home/data" -U "$SUPERUSER" --auth-local=trust --auth-host=reject \
    --no-locale --encoding=UTF8 >"$home/initdb.log" 2>&1 ||
    die "initdb failed (its output: $home/initdb.log): $(tail -n 5 "$home/initdb.log")"
  # Only the local socket, trusted: no TCP line at all.
  echo "local all all trust" | as_owner tee "$home/data/pg_hba.conf" >/dev/null
  as_owner tee -a "$home/data/postgresql.conf" >/dev/null <<EOF
# postgres_cluster.sh: a test cluster, thrown away after the run.
listen_addresses = ''
unix_socket_directories = '$home'
port = $PORT
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
EOF
}

# Starts the server and waits until it accepts connections (at most WAIT_S).
start_server() {
  local home="$1"
  if ! as_owner "$PG_BINDIR/pg_ctl" start -w -t "$WAIT_S" -D "$home/data" -l "$home/postgres.log" >/dev/null 2>&1; then
    die "pg_ctl start failed (log: $home/postgres.log): $(tail -n 5 "$home/postgres.log" 2>/dev/null)"
  fi
  local deadline=$((SECONDS + WAIT_S))
  until "$PG_BINDIR/pg_isready" -q -h "$home" -p "$PORT" -U "$SUPERUSER" -d postgres; do
    [ $SECONDS -lt $deadline ] || die "the server in $home did not answer pg_isready within ${WAIT_S} s (log: $home/postgres.log)"
    sleep 0.1
  done
}

write_env() {
  local dir="$1" home="$2"
  # Written whole, then renamed: a test never reads half of it.
  cat >"$dir/env.tmp" <<EOF
PGHOST=$home
PGPORT=$PORT
PGUSER=$SUPERUSER
PGDATABASE=postgres
SKILLRUNNER_PG_BINDIR=$PG_BINDIR
EOF
  chmod 0644 "$dir/env.tmp"
  mv "$dir/env.tmp" "$dir/env"
}

cmd_start() {
  local dir="$1" home
  check_binaries
  home="$(home_of "$dir")"
  if is_running "$home" && [ -f "$dir/env" ]; then
    echo "postgres_cluster: already running in $home (settings: $dir/env)"
    return 0
  fi
  check_ours "$dir"
  # A stopped cluster left by a run that ended early: start afresh.
  [ -e "$dir" ] && remove_cluster "$dir"
  mkdir -p "$dir"
  touch "$dir/.postgres_cluster"
  if [ "$(id -u)" -eq 0 ]; then
    id nobody >/dev/null 2>&1 || die "there is no user nobody to run the server as"
    chown nobody "$dir"
  fi
  home="$(choose_home "$dir")"
  [ "$home" != "$dir" ] && echo "$home" >"$dir/home"
  init_cluster "$home"
  start_server "$home"
  write_env "$dir" "$home"
  echo "postgres_cluster: started in $home in ${SECONDS} s (settings: $dir/env)"
}

cmd_stop() {
  local dir="$1" home
  [ -e "$dir" ] || {
    echo "postgres_cluster: nothing in $dir"
    return 0
  }
  check_ours "$dir"
  home="$(home_of "$dir")"
  if is_running "$home"; then
    as_owner "$PG_BINDIR/pg_ctl" stop -m fast -w -t "$WAIT_S" -D "$home/data" >/dev/null ||
      die "pg_ctl stop failed for $home/data (log: $home/postgres.log)"
  fi
  remove_cluster "$dir"
  echo "postgres_cluster: stopped and removed $dir"
}

[ $# -eq 2 ] || usage
# An absolute path: the server's own working folder is its data folder, and
# unix_socket_directories must not be relative.
DIR="$(realpath -m -- "$2")"
[ "$DIR" != / ] || die "refusing DIR=/"
case "$1" in
  start) cmd_start "$DIR" ;;
  stop) cmd_stop "$DIR" ;;
  *) usage ;;
esac
