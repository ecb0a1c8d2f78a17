"""What differs between the two databases factnote runs on, SQLite (embedded, one process) and
PostgreSQL (many processes and workers), asked in one place: the bot and the queries branch on
these answers instead of reading SQLAlchemy's URL or dialect objects themselves, and the two
dialects' INSERT … ON CONFLICT are chosen here. The one exception is the SQL each engine
speaks for full-text search, which has its own module (`storage.indexes.fulltext`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Insert, insert
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

POSTGRESQL = "postgresql"
SQLITE = "sqlite"


def backend(database_url: str) -> str:
    """`sqlite` or `postgresql` (another backend SQLAlchemy knows is named as it names it)."""
    return make_url(database_url).get_backend_name()


def is_postgres(database_url: str) -> bool:
    return backend(database_url) == POSTGRESQL


def on_postgres(bound: Session | Connection) -> bool:
    """Whether a session or a connection runs on PostgreSQL (its engine's dialect)."""
    return dialect_of(bound) == POSTGRESQL


def on_sqlite(bound: Session | Connection) -> bool:
    return dialect_of(bound) == SQLITE


def dialect_of(bound: Session | Connection) -> str:
    engine = bound.get_bind() if isinstance(bound, Session) else bound
    return engine.dialect.name


def insert_on_conflict(bound: Session | Connection, target: Any) -> Any:
    """The dialect's INSERT with `on_conflict_do_nothing` / `on_conflict_do_update` for a table
    or a mapped class (both dialects spell them alike; SQLAlchemy's core insert has neither)."""
    if on_postgres(bound):
        # Imported on a PostgreSQL connection only: the dialect's catalog tables are a tenth
        # of a second of start-up that an SQLite deployment need not pay.
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(target)
    return sqlite.insert(target)


def insert_ignoring_duplicates(bound: Session | Connection, target: Any) -> Insert:
    """An INSERT that skips a row whose unique key is already stored: another process (a
    second scheduler, a manual pull) may store the same row between our check and our write."""
    if dialect_of(bound) in (POSTGRESQL, SQLITE):
        return insert_on_conflict(bound, target).on_conflict_do_nothing()
    return insert(target)


def sqlite_file(database_url: str) -> Path | None:
    """The file a SQLite URL names; None for another database or an in-memory one."""
    url = make_url(database_url)
    if url.get_backend_name() != SQLITE or not url.database or url.database == ":memory:":
        return None
    return Path(url.database)


def conninfo(database_url: str) -> str:
    """The libpq form of a SQLAlchemy URL (`postgresql+psycopg://` -> `postgresql://`)."""
    url = make_url(database_url).set(drivername="postgresql")
    return url.render_as_string(hide_password=False)


def shown(database_url: str) -> str:
    """The URL as it may be printed: its password hidden."""
    return make_url(database_url).render_as_string(hide_password=True)


def same_database(one: str, other: str) -> bool:
    """Whether two URLs name the same database (spelt alike once parsed)."""
    return make_url(one) == make_url(other)
