"""A throwaway PostgreSQL cluster for the PostgreSQL benchmarks (as tests/postgres.py starts
one for the tests): a temporary directory, a free loopback port, `trust` authentication and
fsync off, run as the `postgres` system user when this is root. The binaries come from Debian
(`tools/ensure-postgres.sh`)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text

PG_BIN = Path(os.environ.get("FACTNOTE_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))


def available() -> bool:
    return (PG_BIN / "initdb").exists()


@contextmanager
def cluster() -> Iterator[str]:
    """Start a cluster; yields its server URL (no database part)."""
    root = Path(tempfile.mkdtemp(prefix="factnote-bench-pg-"))
    owner = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if owner:
        shutil.chown(root, user="postgres", group="postgres")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    data = root / "data"
    initdb = [str(PG_BIN / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust"]
    subprocess.run([*owner, *initdb, "--no-sync"], check=True, capture_output=True)
    options = f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c max_connections=200"
    pg_ctl = [*owner, str(PG_BIN / "pg_ctl"), "-D", str(data)]
    subprocess.run(
        [*pg_ctl, "-l", str(root / "log"), "-o", options, "-w", "start"],
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}"
    finally:
        subprocess.run([*pg_ctl, "-m", "immediate", "-w", "stop"], check=False, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(server: str, name: str) -> str:
    """Create the empty database `name` on `server`; its URL."""
    admin = create_engine(f"{server}/postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return f"{server}/{name}"
