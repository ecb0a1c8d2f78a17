"""Migration 0010: the pipeline's index stores as tables of the main database, with the
database's own full text, on SQLite and on PostgreSQL (a throwaway cluster, tests/postgres.py)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, delete, insert, inspect, text

from pipeline.records import Document
from storage.db import Database, alembic_config
from storage.indexes.tables import claims, declared_here
from storage.indexes.tables import metadata as index_metadata
from storage.models import Base
from testing import indexes

INDEX_TABLES = {"index_meta", "claims", "authority_statements", "local_documents", "local_passages"}


def claim_row(key: str, claim_text: str) -> dict[str, object]:
    return {"key": key, "claim_text": claim_text, "record_json": "{}", "embedding": b"\0" * 4}


def full_text_ids(engine: Engine, word: str) -> list[int]:
    if engine.dialect.name == "sqlite":
        sql = "SELECT rowid FROM claims_fts WHERE claims_fts MATCH :w ORDER BY rowid"
    else:
        sql = "SELECT id FROM claims WHERE search_vector @@ to_tsquery('english', :w) ORDER BY id"
    with engine.connect() as connection:
        return [int(r[0]) for r in connection.execute(text(sql), {"w": word})]


def test_the_models_and_index_tables_are_what_the_migrations_make(main_db: Database) -> None:
    with main_db.engine.connect() as connection:
        context = MigrationContext.configure(
            connection,
            opts={
                "include_object": lambda _o, name, type_, *_: declared_here(name, type_),
                "compare_type": True,
            },
        )
        assert compare_metadata(context, [Base.metadata, index_metadata]) == []


def test_full_text_follows_every_insert_update_and_delete(main_db: Database) -> None:
    engine = main_db.engine
    with engine.begin() as connection:
        connection.execute(insert(claims), [claim_row("a", "Birds die near 5G masts")])
        connection.execute(insert(claims), [claim_row("b", "Lemon water cures the flu")])
    assert full_text_ids(engine, "birds") == [1]
    with engine.begin() as connection:
        connection.execute(claims.update().where(claims.c.key == "a").values(claim_text="Fish"))
        connection.execute(delete(claims).where(claims.c.key == "b"))
    assert full_text_ids(engine, "birds") == []
    assert full_text_ids(engine, "lemon") == []
    assert full_text_ids(engine, "fish") == [1]


def test_going_down_to_0009_removes_the_index_tables_and_their_full_text(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'factnote.db'}"
    Database(url).dispose()
    command.downgrade(alembic_config(url), "0009")
    db = Database(url, migrate=False)
    try:
        names = set(inspect(db.engine).get_table_names())
        assert not names & INDEX_TABLES
        assert not any(name.startswith(("claims_fts", "local_documents_fts")) for name in names)
    finally:
        db.dispose()
    Database(url).dispose()  # and up again


def test_index_tables_a_store_made_before_the_migrations_ran_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "factnote.db"
    url = "https://health.example/flu"
    with indexes.local_index(path) as local:
        local.add(Document(url=url, canonical_url=url, ok=True, text="Lemon water and flu."))
    db = Database(f"sqlite:///{path}")
    try:
        with indexes.local_index(db.engine) as local:
            assert [r.url for r in local.search("lemon flu", limit=3)] == [url]
    finally:
        db.dispose()
