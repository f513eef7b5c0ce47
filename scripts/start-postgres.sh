#!/usr/bin/env bash
# Starts a throw-away PostgreSQL cluster for tests and CI: a fresh initdb in a
# temp directory, owned by the `postgres` user, listening on 127.0.0.1 on a
# free port, password (SCRAM) auth. Installs PostgreSQL with apt-get if no
# server binaries are found.
#
#   eval "$(scripts/start-postgres.sh)"      # exports CLAW_TEST_PG_URL and CLAW_TEST_PG_DATA
#   scripts/start-postgres.sh stop [DIR]     # stops the cluster in DIR (default $CLAW_TEST_PG_DATA), deletes DIR
#
# Only the export lines go to stdout; progress goes to stderr.
set -euo pipefail

log() { echo "start-postgres: $*" >&2; }

find_bin() {
    local d
    # Prefer the highest major version.
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | while read -r d; do
        [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && echo "$d"
    done | tail -n 1
}

# Runs a command as the postgres user when we are root (initdb refuses root).
as_pg() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

if [ "${1:-}" = "stop" ]; then
    dir="${2:-${CLAW_TEST_PG_DATA:-}}"
    [ -n "$dir" ] && [ -d "$dir/data" ] || { log "nothing to stop (no cluster in '${dir}')"; exit 0; }
    bin="$(find_bin)"
    as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
    rm -rf "$dir"
    log "stopped and removed $dir"
    exit 0
fi

bin="$(find_bin)"
if [ -z "$bin" ]; then
    log "PostgreSQL server not found; installing it with apt-get"
    if [ "$(id -u)" != 0 ]; then
        log "need root to install PostgreSQL"; exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends postgresql >&2
    bin="$(find_bin)"
    [ -n "$bin" ] || { log "PostgreSQL install failed"; exit 1; }
fi

if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    useradd --system --user-group --home-dir /var/lib/postgresql --shell /bin/sh postgres
fi

dir="$(mktemp -d "${TMPDIR:-/tmp}/claw-pg.XXXXXX")"
chmod 700 "$dir"
[ "$(id -u)" = 0 ] && chown postgres: "$dir"
password="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
printf '%s\n' "$password" > "$dir/pwfile"
[ "$(id -u)" = 0 ] && chown postgres: "$dir/pwfile"
chmod 600 "$dir/pwfile"

log "initdb in $dir/data ($bin)"
as_pg "$bin/initdb" -D "$dir/data" -U postgres --pwfile="$dir/pwfile" \
    --auth=scram-sha-256 -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
rm -f "$dir/pwfile"

started=""
for _ in 1 2 3 4 5 6 7 8 9 10; do
    port=$(( 20000 + RANDOM % 30000 ))
    if as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
        -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir -c max_connections=300" \
        start >/dev/null 2>&1; then
        started=1
        break
    fi
    log "port $port busy or start failed, retrying"
done
if [ -z "$started" ]; then
    log "could not start PostgreSQL; server log:"; cat "$dir/server.log" >&2 || true
    exit 1
fi

log "PostgreSQL listening on 127.0.0.1:$port (data in $dir)"
echo "export CLAW_TEST_PG_URL='postgres://postgres:$password@127.0.0.1:$port/postgres'"
echo "export CLAW_TEST_PG_DATA='$dir'"
