"""`factnote db migrate-to URL` via typer's runner: a filled SQLite deployment (requests,
claims, local documents) copied to another SQLite file and to PostgreSQL (a throwaway
cluster, tests/postgres.py), counts checked, a non-empty target refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from bot.commands.db import app
from pipeline.claims.index import ClaimRecord
from pipeline.claims.ratings import Rating
from pipeline.config import RelevanceConfig
from pipeline.records import Document
from pipeline.relevance.scoring import Embedder, get_embedder
from storage.db import Database
from storage.models import Request
from testing import indexes

runner = CliRunner()
LEMON = "Drinking hot lemon water every hour kills the flu virus in your throat."


@pytest.fixture
def source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A configured SQLite deployment holding a few rows of every kind."""
    url = f"sqlite:///{tmp_path / 'factnote.db'}"
    monkeypatch.setenv("FACTNOTE_DATABASE_URL", url)
    db = Database(url)
    embedder = get_embedder(RelevanceConfig())
    with db.transaction() as session:
        session.add_all(Request(platform="x", summons_id=str(n)) for n in range(3))
    with indexes.claim_index(db.engine, embedder) as claims:
        claims.add(
            [
                ClaimRecord(
                    claim_text=LEMON,
                    review_url="https://checks.example/lemon",
                    rating=Rating.FALSE,
                )
            ]
        )
    with indexes.local_index(db.engine, embedder=embedder) as local:
        local.add(
            Document(
                url="https://health.example/flu",
                canonical_url="https://health.example/flu",
                ok=True,
                title="Flu facts",
                text="Lemon water does not kill the influenza virus; vaccines prevent flu.",
            )
        )
    db.dispose()
    return url


def migrate(target: str, *extra: str) -> tuple[int, str]:
    result = runner.invoke(app, ["migrate-to", target, *extra])
    return result.exit_code, result.output


def assert_copied(target: str) -> None:
    db = Database(target)
    try:
        with db.session() as session:
            assert len(session.scalars(select(Request)).all()) == 3
        with db.transaction() as session:  # ids continue after the copied ones
            session.add(Request(platform="x", summons_id="new"))
        embedder = get_embedder(RelevanceConfig())
        with indexes.local_index(db.engine, embedder=embedder) as local:
            assert [r.url for r in local.search("lemon influenza", limit=3)] == [
                "https://health.example/flu"
            ]
        with indexes.claim_index(db.engine, embedder) as claims:
            assert claims.match("hot lemon water kills flu")[0].record.claim_text == LEMON
    finally:
        db.dispose()


def test_migrate_to_another_sqlite_copies_every_row_and_checks_the_counts(
    source: str, tmp_path: Path
) -> None:
    target = f"sqlite:///{tmp_path / 'moved.db'}"
    code, output = migrate(target)
    assert code == 0, output
    assert "counts match" in output
    for line in ("requests", "claims", "local_documents", "local_passages"):
        assert line in output
    assert_copied(target)


def test_a_target_holding_rows_is_refused_unless_forced(source: str, tmp_path: Path) -> None:
    target = f"sqlite:///{tmp_path / 'moved.db'}"
    assert migrate(target)[0] == 0
    code, output = migrate(target)
    assert code == 1
    assert "already holds rows" in output and "--force" in output
    code, output = migrate(target, "--force")
    assert code == 0, output
    assert_copied(target)


def test_the_configured_database_is_not_its_own_target(source: str) -> None:
    code, output = migrate(source)
    assert code == 2
    assert "configured database itself" in output


@pytest.mark.postgres
def test_migrate_to_postgresql_copies_every_row_and_its_search_works(
    source: str, postgres_url: str
) -> None:
    code, output = migrate(postgres_url)
    assert code == 0, output
    assert "counts match" in output
    assert_copied(postgres_url)


# The side-file layout of schema "1", as pipeline/sqlite_store.py and the three stores wrote it
# before migration 0010 (git history of pipeline/claims/index.py, authority.py, local_index.py).
OLD_CLAIMS = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE claims (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE,
    record_json TEXT NOT NULL, embedding BLOB NOT NULL);
"""
OLD_STATEMENTS = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE statements (id INTEGER PRIMARY KEY, platform TEXT NOT NULL, account TEXT NOT NULL,
    post_id TEXT NOT NULL, text TEXT NOT NULL, created_at TEXT NOT NULL, created_ts REAL NOT NULL,
    url TEXT NOT NULL, terms TEXT NOT NULL, embedding BLOB NOT NULL, UNIQUE (platform, post_id));
"""
OLD_DOCUMENTS = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE documents (id INTEGER PRIMARY KEY, canonical_url TEXT NOT NULL UNIQUE,
    url_key TEXT NOT NULL, host TEXT NOT NULL, domain TEXT NOT NULL, content_hash TEXT NOT NULL,
    embedded INTEGER NOT NULL, doc_json TEXT NOT NULL);
CREATE TABLE passages (id INTEGER PRIMARY KEY, doc_id INTEGER NOT NULL, idx INTEGER NOT NULL,
    text TEXT NOT NULL, embedding BLOB);
"""


def old_file(path: Path, schema: str, dim: int, rows: dict[str, list[tuple[object, ...]]]) -> Path:
    with sqlite3.connect(path) as conn:
        conn.executescript(schema)
        conn.executemany(
            "INSERT INTO meta VALUES (?, ?)", [("schema", "1"), ("embedding_dim", str(dim))]
        )
        for table, values in rows.items():
            marks = ",".join("?" * len(values[0]))
            conn.executemany(f"INSERT INTO {table} VALUES ({marks})", values)
    conn.close()
    return path


OLD_RECORD = ClaimRecord(
    claim_text=LEMON, review_url="https://checks.example/lemon", rating=Rating.FALSE
)
OLD_DOC = Document(
    url="https://health.example/flu",
    canonical_url="https://health.example/flu",
    ok=True,
    title="Flu facts",
    text="Lemon water does not kill the influenza virus.",
)


def old_side_files(tmp_path: Path, embedder: Embedder) -> tuple[Path, Path, Path]:
    """The claims, authority and index side files of an old deployment, one row each."""
    vector = embedder.encode([LEMON])[0].astype("<f4").tobytes()
    claims = old_file(
        tmp_path / "claims.sqlite",
        OLD_CLAIMS,
        embedder.dim,
        {"claims": [(1, OLD_RECORD.key, OLD_RECORD.model_dump_json(), vector)]},
    )
    statements = old_file(
        tmp_path / "authority.sqlite",
        OLD_STATEMENTS,
        embedder.dim,
        {
            "statements": [
                (
                    1,
                    "x",
                    "who",
                    "9",
                    "Flu shots are safe.",
                    "2026-01-01T00:00:00+00:00",
                    1767225600.0,
                    "https://x.com/who/status/9",
                    "flu shot safe",
                    vector,
                )
            ]
        },
    )
    index = old_file(
        tmp_path / "index.sqlite",
        OLD_DOCUMENTS,
        embedder.dim,
        {
            "documents": [
                (
                    7,
                    OLD_DOC.url,
                    "health.example/flu",
                    "health.example",
                    "health.example",
                    "h",
                    1,
                    OLD_DOC.model_dump_json(),
                )
            ],
            "passages": [(3, 7, 0, OLD_DOC.text, vector)],
        },
    )
    return claims, statements, index


def test_old_side_files_are_imported_once_and_searchable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'factnote.db'}"
    monkeypatch.setenv("FACTNOTE_DATABASE_URL", url)
    embedder = get_embedder(RelevanceConfig())
    record, doc = OLD_RECORD, OLD_DOC
    claims, statements, index = old_side_files(tmp_path, embedder)
    args = [
        "import-side-files",
        "--claims",
        str(claims),
        "--authority",
        str(statements),
        "--index",
        str(index),
    ]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    for store in ("claims", "authority", "local"):
        assert f"{store}: 1 row(s) in" in first.output and "1 added" in first.output
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and "0 added, 1 already in the database" in again.output
    db = Database(url)
    try:
        with indexes.claim_index(db.engine, embedder) as index_claims:
            assert index_claims.match("hot lemon water kills flu")[0].record.key == record.key
        with indexes.local_index(db.engine, embedder=embedder) as local:
            [hit] = local.search("influenza lemon", limit=3)
            assert hit.url == doc.url
            stored = local.get(doc.url)
            assert stored is not None and stored.text == doc.text
    finally:
        db.dispose()


def test_a_side_file_of_another_embedding_size_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTNOTE_DATABASE_URL", f"sqlite:///{tmp_path / 'factnote.db'}")
    monkeypatch.chdir(tmp_path)  # the default paths of the other stores hold nothing
    dim = get_embedder(RelevanceConfig()).dim
    record = ClaimRecord(claim_text=LEMON, review_url="https://checks.example/lemon")
    row = (1, record.key, record.model_dump_json(), b"")
    ok = old_file(tmp_path / "a.sqlite", OLD_CLAIMS, dim, {"claims": [row]})
    wide = old_file(tmp_path / "b.sqlite", OLD_CLAIMS, dim + 1, {"claims": [row]})
    assert runner.invoke(app, ["import-side-files", "--claims", str(ok)]).exit_code == 0
    result = runner.invoke(app, ["import-side-files", "--claims", str(wide)])
    assert result.exit_code == 1
    assert f"{dim}-dimensional" in result.output
