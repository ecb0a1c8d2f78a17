"""The claim index's rows in SQL (`storage.indexes.claims`), on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from pipeline.records import IndexStoreError
from storage.db import Database
from storage.indexes import SqlClaimRows, open_claim_rows
from storage.indexes.tables import EmbeddingSizeMismatch

VECTOR = b"\x00\x00\x80?" * 3  # three float32 ones


def row(key: str, text: str = "claim", record: str = "{}") -> tuple[str, str, str, bytes]:
    return (key, text, record, VECTOR)


def test_a_replaced_row_is_stored_anew_under_the_highest_id(main_db: Database) -> None:
    with SqlClaimRows.open(main_db.engine) as rows:
        rows.replace([row("a"), row("b")], dim=3)
        rows.replace([row("a", record='{"v": 2}')], dim=3)
        assert rows.count() == 2
        assert rows.stored_json(["a", "b", "missing"]) == {"a": '{"v": 2}', "b": "{}"}
        last = rows.last_row()
        assert last is not None and last[1] == "a"
        assert rows.key_of(last[0]) == "a"
        assert [i for i, _ in rows.embeddings()][-1] == last[0]
        assert rows.embeddings(after=last[0]) == []


def test_keys_and_ids_beyond_one_query_are_all_read() -> None:
    with open_claim_rows(":memory:") as rows:
        rows.replace([row(f"k{n}", text=f"claim {n}") for n in range(1200)], dim=3)
        assert len(rows.stored_json(f"k{n}" for n in range(2400))) == 1200
        ids = [i for i, _ in rows.embeddings()]
        assert len(rows.texts(ids)) == len(rows.records_json(ids)) == 1200
        assert rows.texts()[ids[5]] == "claim 5"


def test_another_embedding_size_is_refused_with_the_store_named(main_db: Database) -> None:
    with SqlClaimRows.open(main_db.engine) as rows:
        rows.replace([row("a")], dim=3)
        rows.check_embedding_dim(3)
        with pytest.raises(EmbeddingSizeMismatch, match="claim index holds 3-dimensional"):
            rows.check_embedding_dim(4)
        with pytest.raises(IndexStoreError, match="4-dimensional"):
            rows.replace([row("b")], dim=4)
        assert rows.count() == 1  # the refused write left nothing behind


def test_full_text_finds_a_claim_by_any_of_its_words(main_db: Database) -> None:
    with SqlClaimRows.open(main_db.engine) as rows:
        rows.replace([row("a", "Lemon water kills the flu"), row("b", "5G masts kill birds")], 3)
        found = rows.fulltext_ids(["lemon", "nothing"], limit=5)
        assert found == [i for i, t in rows.texts().items() if t.startswith("Lemon")]
        assert rows.fulltext_ids([], limit=5) == []


def test_a_database_failure_is_an_index_store_error() -> None:
    with open_claim_rows(":memory:") as rows:
        with rows._engine.begin() as connection:  # a store broken under it
            connection.execute(text("DROP TABLE claims"))
        with pytest.raises(IndexStoreError, match="claims"):
            rows.count()


def test_a_file_that_is_no_database_cannot_be_opened(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"not a database " * 300)
    with pytest.raises(IndexStoreError, match=r"cannot open the claim index in .*notes\.txt"):
        open_claim_rows(path)
