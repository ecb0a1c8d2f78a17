"""Alembic environment: runs migrations against the URL set by `storage.db.alembic_config`."""

from __future__ import annotations

from typing import Any, Literal

from alembic import context
from sqlalchemy import text

from storage.db import DEFAULT_BUSY_TIMEOUT_S, make_engine
from storage.dialect import on_postgres
from storage.indexes.tables import declared_here
from storage.indexes.tables import metadata as index_metadata
from storage.models import Base, UTCDateTime

config = context.config
# Every process of a deployment migrates at start; on a fresh PostgreSQL database several did it
# at once (`docker compose up`: the scheduler, the workers and the web app) and all but one
# failed creating `alembic_version`. A transaction-level advisory lock queues them: the first
# migrates, the others then find the database at head. Key: "fnmigrat" in ASCII.
_MIGRATION_LOCK = 0x666E6D6967726174
# The pipeline's index stores are tables of the same database (`storage.indexes.tables`).
target_metadata = [Base.metadata, index_metadata]


def include_object(
    obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any
) -> bool:
    return declared_here(name, type_)


def render_item(type_: str, obj: Any, autogen_context: Any) -> str | Literal[False]:
    """Write our UTC column type as the plain DateTime it is in the database, so migrations
    never import the models (which keep changing after a migration is written)."""
    if type_ == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    url = config.get_main_option("sqlalchemy.url")
    assert url is not None
    engine = make_engine(
        url, busy_timeout_s=config.attributes.get("busy_timeout_s", DEFAULT_BUSY_TIMEOUT_S)
    )
    with engine.connect() as connection:
        # Batch mode lets later migrations alter SQLite tables (ALTER TABLE is limited there).
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=True,
            render_item=render_item,
            include_object=include_object,
        )
        with context.begin_transaction():
            if on_postgres(connection):
                connection.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK}
                )
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
