#!/usr/bin/env bash
# Installs Debian's PostgreSQL 15 server binaries for the tests marked `postgres`, if missing.
# Idempotent: does nothing when initdb is present. It only installs: each test session starts
# (and stops) its own throwaway cluster on a loopback port (tests/postgres.py), so no system
# service is started or touched.
set -euo pipefail

BIN=/usr/lib/postgresql/15/bin

if [ -x "$BIN/initdb" ] && [ -x "$BIN/pg_ctl" ]; then
    echo "ensure-postgres: $BIN present; nothing to do"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-postgres: $BIN missing and apt-get not available; install Debian's postgresql-15 package" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "ensure-postgres: need root (or sudo) to apt-get install postgresql-15" >&2
        exit 1
    fi
fi

echo "ensure-postgres: $BIN missing; installing Debian's postgresql-15 with apt-get"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# The package's post-install creates a default cluster and may try to start it; the tests do
# not use it (no policy-rc.d games: a container without systemd simply leaves it stopped).
$SUDO apt-get install -y -qq postgresql-15
if [ ! -x "$BIN/initdb" ]; then
    echo "ensure-postgres: apt-get finished but $BIN/initdb is still missing" >&2
    exit 1
fi
echo "ensure-postgres: installed $BIN"
