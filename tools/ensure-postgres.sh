#!/usr/bin/env bash
# Installs Debian's PostgreSQL 15 server binaries for the tests marked `postgres`, if missing.
# It only installs: each test session starts (and stops) its own throwaway cluster on a
# loopback port (tests/postgres.py), so no system service is started or touched.
exec bash "$(dirname "$0")/apt-ensure.sh" postgres /usr/lib/postgresql/15/bin/pg_ctl postgresql-15
