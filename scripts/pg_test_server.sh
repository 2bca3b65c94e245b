#!/usr/bin/env bash
# A throwaway PostgreSQL server for the poll store's tests (Debian's `postgresql` package; scripts/test.sh installs it).
#   scripts/pg_test_server.sh start [PORT]   -> prints its URL, then its data folder (for stop)
#   scripts/pg_test_server.sh stop DIR       -> stops it and removes the folder
# It listens on 127.0.0.1 only, trusts local connections, and keeps everything in a temporary folder.
set -euo pipefail
bindir() {
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then pg_config --bindir; return; fi
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
  [ -n "$d" ] && [ -x "$d/initdb" ] && { echo "$d"; return; }
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return; }
  echo "no PostgreSQL server binaries (apt-get install postgresql)" >&2; exit 3
}
as_owner() {   # initdb and postgres refuse to run as root: the postgres user runs them
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
BIN=$(bindir)
case "${1:-start}" in
  start)
    port=${2:-55432}
    while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
    dir=$(mktemp -d /tmp/oplab-pg.XXXXXX)
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    as_owner "$BIN/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 >"$dir/initdb.log" 2>&1
    as_owner "$BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=on" start >/dev/null
    echo "postgresql://postgres@127.0.0.1:$port/postgres"
    echo "$dir"
    ;;
  stop)
    dir=${2:?the data folder start printed}
    case "$dir" in /tmp/oplab-pg.*) ;; *) echo "not a folder this script made: $dir" >&2; exit 2 ;; esac
    as_owner "$BIN/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  *) echo "usage: $0 start [PORT] | stop DIR" >&2; exit 2 ;;
esac
