"""The database layer under another process's lock: a configurable busy timeout, and retries
with backoff that end in one typed error."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from storage.db import DEFAULT_BUSY_TIMEOUT_S, Database, DatabaseBusy, retry_when_locked
from storage.models import Cursor


def test_the_busy_timeout_is_configurable_and_defaults_to_thirty_seconds(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'factnote.db'}"
    for timeout_s, expected_ms in ((DEFAULT_BUSY_TIMEOUT_S, 30_000), (0.25, 250)):
        db = Database(url, busy_timeout_s=timeout_s)
        with db.engine.connect() as conn:
            assert conn.execute(text("PRAGMA busy_timeout")).scalar() == expected_ms
        db.dispose()


def test_a_write_under_a_lock_is_retried_then_reported_as_busy(tmp_path: Path) -> None:
    path = tmp_path / "factnote.db"
    db = Database(f"sqlite:///{path}", busy_timeout_s=0.02)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    runs = 0
    waits: list[float] = []

    def write() -> None:
        nonlocal runs
        runs += 1
        if runs == 3:
            other.execute("ROLLBACK")  # the other process lets go
        with db.transaction() as session:
            session.add(Cursor(adapter=f"a{runs}"))

    try:
        retry_when_locked(write, what="test", attempts=5, backoff_s=0.01, sleep=waits.append)
        assert runs == 3
        assert waits == [0.01, 0.02]  # exponential backoff between runs
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(DatabaseBusy, match="test: the database stayed locked"):
            retry_when_locked(write, what="test", attempts=2, backoff_s=0, sleep=waits.append)
        assert runs == 5
    finally:
        other.close()
        db.dispose()
    with db.session() as session:
        assert [c.adapter for c in session.query(Cursor)] == ["a3"]


def test_other_database_errors_are_not_retried(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'factnote.db'}")
    runs = 0

    def broken() -> None:
        nonlocal runs
        runs += 1
        with db.engine.connect() as conn:
            conn.execute(text("SELECT * FROM no_such_table"))

    with pytest.raises(OperationalError, match="no such table"):
        retry_when_locked(broken, what="test", attempts=5, backoff_s=0, sleep=lambda _s: None)
    assert runs == 1
    db.dispose()
