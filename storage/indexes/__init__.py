"""The pipeline's index stores as tables of the main database, and all their SQL: the tables
(`tables`, which Alembic's environment includes), the full-text search and the other dialect
differences (`fulltext`), and one module of queries per store (`claims`, `statements`,
`documents`). The pipeline's stores are handed these rows objects (their protocols are in
`pipeline.claims.rows`, `pipeline.authority.rows` and `pipeline.search.rows`) by whoever holds
the database: the bot, the evaluations, the benchmarks.

Each `open_*` takes what `tables.open_index_engine` does: the main database's Engine (borrowed),
a database URL, or a SQLite path (":memory:" for a throw-away store), and raises
`pipeline.records.IndexStoreError` when the store cannot be opened.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from storage.indexes.claims import SqlClaimRows
from storage.indexes.documents import SqlDocumentRows
from storage.indexes.statements import SqlStatementRows

__all__ = [
    "SqlClaimRows",
    "SqlDocumentRows",
    "SqlStatementRows",
    "open_claim_rows",
    "open_document_rows",
    "open_statement_rows",
]

Target = str | Path | Engine


def open_claim_rows(target: Target) -> SqlClaimRows:
    """The claim index's rows in `target`."""
    return SqlClaimRows.open(target)


def open_statement_rows(target: Target) -> SqlStatementRows:
    """The authority statements' rows in `target`."""
    return SqlStatementRows.open(target)


def open_document_rows(target: Target) -> SqlDocumentRows:
    """The local search index's rows in `target`."""
    return SqlDocumentRows.open(target)
