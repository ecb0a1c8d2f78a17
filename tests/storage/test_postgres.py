"""The storage layer on a real PostgreSQL 15 (a throwaway cluster, tests/postgres.py).

SQLite is the embedded default; these pin that the same migrations and models work on the
deployment database, and that a PostgreSQL lock is recognised as "busy", not as a failure.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, inspect, select, text
from sqlalchemy.exc import IntegrityError

from storage.db import (
    Database,
    DatabaseBusy,
    alembic_config,
    head_revision,
    retry_when_locked,
)
from storage.models import Base, Request, RequestState

pytestmark = pytest.mark.postgres

REPO = Path(__file__).resolve().parents[2]


def test_migrations_create_every_model_table_on_postgresql(postgres_url: str) -> None:
    Database(postgres_url).dispose()
    engine = create_engine(postgres_url)
    try:
        tables = set(inspect(engine).get_table_names())
    finally:
        engine.dispose()
    assert set(Base.metadata.tables) <= tables
    assert "alembic_version" in tables


def test_migrations_go_down_to_base_and_up_again_on_postgresql(postgres_url: str) -> None:
    Database(postgres_url).dispose()
    cfg = alembic_config(postgres_url)
    command.downgrade(cfg, "base")
    engine = create_engine(postgres_url)
    try:
        assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
        command.upgrade(cfg, "head")
        assert set(Base.metadata.tables) <= set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_processes_starting_together_on_a_fresh_database_all_migrate_it(postgres_url: str) -> None:
    # `docker compose up` starts the scheduler, the workers and the web app at once, and each
    # migrates at start: without the migration lock all but one failed on `alembic_version`.
    # Processes, not threads: Alembic's `context` is one per process.
    code = "import sys; from storage.db import upgrade; upgrade(sys.argv[1])"
    starts = [
        subprocess.Popen(
            [sys.executable, "-c", code, postgres_url], cwd=REPO, stderr=subprocess.PIPE
        )
        for _ in range(4)
    ]
    failures = [p.stderr.read().decode()[-600:] for p in starts if p.wait(timeout=120) != 0]  # type: ignore[union-attr]
    assert failures == []
    engine = create_engine(postgres_url)
    try:
        with engine.connect() as conn:
            versions = conn.execute(text("SELECT version_num FROM alembic_version")).all()
    finally:
        engine.dispose()
    assert versions == [(head_revision(),)]


def test_a_request_round_trips_with_json_and_aware_times(pg_db: Database) -> None:
    when = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    with pg_db.transaction() as session:
        session.add(
            Request(
                platform="bluesky",
                summons_id="at://did:plc:abc/app.bsky.feed.post/3k",
                summons={"text": "is this true? \u00e9\u4e2d", "nested": {"n": 1}},
                next_attempt_at=when,
            )
        )
    with pg_db.session() as session:
        row = session.scalars(select(Request)).one()
    assert row.summons == {"text": "is this true? \u00e9\u4e2d", "nested": {"n": 1}}
    assert row.next_attempt_at == when
    assert row.state == RequestState.RECEIVED.value


def test_the_summons_uniqueness_holds_on_postgresql(pg_db: Database) -> None:
    with pg_db.transaction() as session:
        session.add(Request(platform="x", summons_id="1"))
    with pytest.raises(IntegrityError), pg_db.transaction() as session:
        session.add(Request(platform="x", summons_id="1"))


def test_a_row_locked_by_another_connection_is_reported_busy_not_failed(pg_db: Database) -> None:
    with pg_db.transaction() as session:
        session.add(Request(platform="x", summons_id="locked"))
    holder = pg_db.engine.connect()
    holder_tx = holder.begin()
    holder.execute(text("SELECT id FROM requests WHERE summons_id = 'locked' FOR UPDATE"))
    waits: list[float] = []

    def update() -> None:
        with pg_db.transaction() as session:
            session.execute(text("SET LOCAL lock_timeout = '100ms'"))
            session.execute(text("UPDATE requests SET reason = 'x' WHERE summons_id = 'locked'"))

    try:
        with pytest.raises(DatabaseBusy, match="stayed locked"):
            retry_when_locked(update, what="test", attempts=3, backoff_s=0.01, sleep=waits.append)
    finally:
        holder_tx.rollback()
        holder.close()
    assert len(waits) == 2  # two waits between three attempts: the lock was seen as transient
    update()  # once the holder is gone the same write goes through


def test_a_reply_text_longer_than_a_btree_entry_saves_and_is_found_by_the_repeat_check(
    pg_db: Database,
) -> None:
    # The repeat check's index on reply_text (migration 0013) is a hash index on PostgreSQL: a
    # B-tree one would refuse any text over about 2.7 kB, and a moderator's long edit with it.
    long_reply = "A moderator's long edit. " * 800  # 20,000 characters, incompressible enough
    long_reply += "".join(chr(0x4E00 + i) for i in range(3000))
    with pg_db.transaction() as session:
        session.add(Request(platform="x", summons_id="1", reply_text=long_reply))
    with pg_db.session() as session:
        found = session.scalars(select(Request.id).where(Request.reply_text == long_reply)).all()
        definition = session.execute(
            text("SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_requests_reply_text'")
        ).scalar_one()
    assert len(found) == 1
    assert "USING hash (reply_text)" in definition
