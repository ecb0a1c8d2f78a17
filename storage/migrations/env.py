"""Alembic environment: runs migrations against the URL set by `storage.db.alembic_config`."""

from __future__ import annotations

from typing import Any, Literal

from alembic import context

from pipeline.index_tables import declared_here
from pipeline.index_tables import metadata as index_metadata
from storage.db import DEFAULT_BUSY_TIMEOUT_S, make_engine
from storage.models import Base, UTCDateTime

config = context.config
# The pipeline's index stores are tables of the same database (`pipeline.index_tables`).
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
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
