"""What differs between the two databases factnote runs on, SQLite (embedded, one process) and
PostgreSQL (many processes and workers), asked in one place: the bot and the queries branch on
these answers instead of reading SQLAlchemy's URL or dialect objects themselves."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

POSTGRESQL = "postgresql"
SQLITE = "sqlite"


def backend(database_url: str) -> str:
    """`sqlite` or `postgresql` (another backend SQLAlchemy knows is named as it names it)."""
    return make_url(database_url).get_backend_name()


def is_postgres(database_url: str) -> bool:
    return backend(database_url) == POSTGRESQL


def on_postgres(session: Session) -> bool:
    """Whether `session` runs on PostgreSQL (its bound engine's dialect)."""
    return session.get_bind().dialect.name == POSTGRESQL


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
