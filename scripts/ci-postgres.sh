#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests (PostgresStore).
#
#   eval "$(scripts/ci-postgres.sh start)"   # prints: export PANTO_TEST_POSTGRES_URL=...
#   scripts/ci-postgres.sh stop
#
# start: installs Debian's `postgresql` package with apt when no server binaries
# are found, runs initdb into a fresh temp dir as the unprivileged `postgres`
# user (the server refuses to run as root), and starts it on a private port
# with a private socket directory, listening on 127.0.0.1 only, trust
# authentication (nothing but this machine can reach it).  The state (data
# dir, port) goes to $PANTO_PG_STATE (default /tmp/panto-ci-postgres.env) so
# `stop` finds it.  On failure it prints why on stderr and exits non-zero;
# the tests then skip with that message.
set -euo pipefail

STATE=${PANTO_PG_STATE:-/tmp/panto-ci-postgres.env}

say() { echo "ci-postgres: $*" >&2; }

find_bin() {
    local d
    for d in /usr/lib/postgresql/*/bin; do
        if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
            echo "$d"
        fi
    done | sort -V | tail -n 1
}

as_pg() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

start() {
    local bin
    bin=$(find_bin)
    if [ -z "$bin" ]; then
        if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
            say "no PostgreSQL server binaries and cannot install them (need root and apt-get)"
            exit 1
        fi
        say "installing Debian's postgresql package"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null 2>&1 || {
            apt-get update -q >/dev/null 2>&1
            DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null
        }
        bin=$(find_bin)
        [ -n "$bin" ] || { say "postgresql installed but no server binaries found"; exit 1; }
    fi
    if [ -f "$STATE" ]; then
        stop || true
    fi
    local dir port user
    dir=$(mktemp -d /tmp/panto-pg.XXXXXX)
    mkdir -p "$dir/data" "$dir/sock"
    if [ "$(id -u)" = 0 ]; then
        id postgres >/dev/null 2>&1 || { say "no postgres user to run the server as"; exit 1; }
        chown -R postgres: "$dir"
        user=postgres
    else
        user=$(id -un)
    fi
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    as_pg "$bin/initdb" -D "$dir/data" -A trust -U "$user" -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 || {
        say "initdb failed:"; cat "$dir/initdb.log" >&2; exit 1
    }
    as_pg "$bin/pg_ctl" -D "$dir/data" -w -t 30 -l "$dir/server.log" \
        -o "-p $port -k $dir/sock -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null || {
        say "the server did not start:"; cat "$dir/server.log" >&2; exit 1
    }
    local url="postgresql://$user@127.0.0.1:$port/postgres"
    {
        echo "PG_BIN=$bin"
        echo "PG_DIR=$dir"
        echo "PANTO_TEST_POSTGRES_URL=$url"
    } >"$STATE"
    echo "export PANTO_TEST_POSTGRES_URL=$url"
}

stop() {
    [ -f "$STATE" ] || return 0
    # shellcheck disable=SC1090
    . "$STATE"
    if [ -n "${PG_DIR:-}" ] && [ -d "$PG_DIR/data" ]; then
        as_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
        rm -rf "$PG_DIR"
    fi
    rm -f "$STATE"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
