"""A throwaway PostgreSQL 15 cluster for the tests marked `postgres`.

One cluster per test session, in a temporary directory, listening on a free loopback port only,
with `trust` authentication (nothing but this process's tests can reach it) and fsync off (the
data is thrown away). Each test gets its own empty database, so tests never see each other's
rows. The binaries come from Debian (`tools/ensure-postgres.sh`, run by `make test`); when they
are missing the tests fail with that instruction rather than skip, so a green run means the
PostgreSQL paths really ran.

As root (CI, this container), PostgreSQL refuses to run, so the cluster is run as the `postgres`
system user through `runuser`; as any other user it runs as that user.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from storage.db import Database

PG_BIN = Path(os.environ.get("FACTNOTE_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))
_names = itertools.count(1)


@dataclass(frozen=True)
class Cluster:
    host: str
    port: int
    user: str = "postgres"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{self.user}@{self.host}:{self.port}/{database}"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_cluster_owner(args: list[str]) -> list[str]:
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *args]
    return args


def _run(args: list[str]) -> None:
    done = subprocess.run(_as_cluster_owner(args), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")


def _prepare_dir() -> Path:
    root = Path(tempfile.mkdtemp(prefix="factnote-pg-"))
    if os.geteuid() == 0:
        shutil.chown(root, user="postgres", group="postgres")
    return root


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Cluster]:
    initdb, pg_ctl = PG_BIN / "initdb", PG_BIN / "pg_ctl"
    if not (initdb.is_file() and pg_ctl.is_file()):
        pytest.fail(
            f"PostgreSQL binaries not found in {PG_BIN}: run tools/ensure-postgres.sh "
            "(`make test` does) or set FACTNOTE_TEST_PG_BIN"
        )
    root = _prepare_dir()
    data, log = root / "data", root / "server.log"
    port = _free_port()
    _run([str(initdb), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"])
    options = f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c full_page_writes=off"
    _run([str(pg_ctl), "-D", str(data), "-l", str(log), "-o", options, "-w", "start"])
    try:
        yield Cluster(host="127.0.0.1", port=port)
    finally:
        _run([str(pg_ctl), "-D", str(data), "-m", "immediate", "-w", "stop"])
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_cluster: Cluster) -> Iterator[str]:
    """The URL of a fresh, empty database on the session's cluster, dropped afterwards."""
    name = f"factnote_test_{os.getpid()}_{next(_names)}"
    admin = create_engine(postgres_cluster.url(), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        yield postgres_cluster.url(name)
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


@pytest.fixture
def pg_db(postgres_url: str) -> Iterator[Database]:
    """A migrated factnote database on PostgreSQL (the counterpart of the `db` fixture)."""
    database = Database(postgres_url)
    yield database
    database.dispose()


def terminate_backend(url: str, pid: int) -> None:
    """End the server process behind connection `pid`, as a server restart would."""
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            assert conn.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid}).scalar()
    finally:
        admin.dispose()
