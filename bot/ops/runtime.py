"""Wiring: settings in, a database and a ready pipeline out."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from bot.config import Settings
from bot.memory.store import StoredMemory
from bot.overrides import apply_overrides
from pipeline.check import Checker
from pipeline.shared_parts import SharedParts, StoreRows
from storage.db import Database, Engine, retry_when_locked
from storage.images import SqlImageStore
from storage.indexes import open_claim_rows, open_document_rows, open_statement_rows
from storage.repositories import SqlDocumentStore


@dataclass
class Runtime:
    settings: Settings
    db: Database
    shared: SharedParts
    checker: Checker


def index_rows(engine: Engine) -> StoreRows:
    """The rows of the three indexes: tables of the main database, made by its migrations."""
    return StoreRows(
        documents=open_document_rows(engine),
        claims=open_claim_rows(engine),
        statements=open_statement_rows(engine),
    )


@contextmanager
def open_runtime(settings: Settings, *, shared: SharedParts | None = None) -> Iterator[Runtime]:
    runtime = settings.runtime
    # Opening migrates the schema, which waits for the write lock like any other step.
    db = retry_when_locked(
        lambda: Database(settings.database_url, busy_timeout_s=settings.database_busy_timeout_s),
        what="opening the database",
        attempts=runtime.db_lock_attempts,
        backoff_s=runtime.db_lock_backoff_s,
    )
    settings = apply_overrides(settings, db)
    if settings.queue.backend == "procrastinate":
        # Imported here: an embedded (SQLite) deployment never loads the queue engine.
        from bot.ops.queue import enqueue_from

        enqueue_from(db, settings)
    shared = shared or SharedParts.build(
        settings.pipeline(),
        rows=index_rows(db.engine),
        store=SqlDocumentStore(db),
        images=SqlImageStore(db),
    )
    if shared.memory is None and settings.memory.mode != "off":
        # This deployment's experience memory, loaded once; the checks retrieve from it.
        shared.memory = StoredMemory(db, settings.memory, embedder=shared.embedder)
    try:
        checker = Checker(shared, deadline_s=settings.runtime.check_deadline_s)
        yield Runtime(settings=settings, db=db, shared=shared, checker=checker)
    finally:
        shared.close()
        db.dispose()
