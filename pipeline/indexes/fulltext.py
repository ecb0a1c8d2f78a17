"""Full-text search through the database's own engine: SQLite FTS5 (bm25) or PostgreSQL
`tsvector` (ts_rank) over the tables of `pipeline.indexes.tables`, behind one pair of functions.

Queries are free text: each dialect gets its words OR-ed, so any word may match, and input
that looks like query syntax stays plain text (FTS5: every word quoted; PostgreSQL:
`websearch_to_tsquery`, which never raises a syntax error). The two rank differently (bm25
against ts_rank with title weight A), so results agree in substance, not rank for rank.
"""

from __future__ import annotations

import re

from sqlalchemy import (
    ColumnElement,
    Connection,
    and_,
    column,
    func,
    literal_column,
    select,
    table,
    text,
    true,
)

from pipeline.indexes.tables import PG_VECTOR_COLUMN, claims, local_documents
from pipeline.relevance.lexical import ENGLISH_STOPWORDS

MAX_QUERY_TERMS = 32
SNIPPET_WORDS = 40

_TERM = re.compile(r"\w+", re.UNICODE)


def query_words(query: str) -> list[str]:
    """The words a free-text query searches for, lower-case, first occurrence first.

    Function words match nearly every document; OR-ing them into a query would turn any query
    into "everything", so they are dropped unless nothing else is left."""
    words = [t.lower() for t in _TERM.findall(query)]
    content = [t for t in words if t not in ENGLISH_STOPWORDS and (len(t) > 1 or t.isdigit())]
    return list(dict.fromkeys(content or words))[:MAX_QUERY_TERMS]


def fts5_expression(words: list[str]) -> str | None:
    """An FTS5 MATCH expression: each word quoted (so `AND`, `*`, `:` are plain text)."""
    return " OR ".join(f'"{w}"' for w in words) if words else None


def _pg_query(words: list[str]) -> ColumnElement[object]:
    return func.websearch_to_tsquery(literal_column("'english'"), " or ".join(words))


def claim_ids(connection: Connection, query: str, limit: int) -> list[int]:
    """Ids of the `limit` stored claims best matching `query` by full text, best first."""
    words = query_words(query)
    if not words:
        return []
    if connection.dialect.name == "sqlite":
        rows = connection.execute(
            text(
                "SELECT rowid FROM claims_fts WHERE claims_fts MATCH :q"
                " ORDER BY bm25(claims_fts), rowid LIMIT :n"
            ),
            {"q": fts5_expression(words), "n": limit},
        )
    else:
        vector: ColumnElement[object] = literal_column(f"claims.{PG_VECTOR_COLUMN}")
        tsquery = _pg_query(words)
        rows = connection.execute(
            select(claims.c.id)
            .where(vector.op("@@")(tsquery))
            .order_by(func.ts_rank(vector, tsquery).desc(), claims.c.id)
            .limit(limit)
        )
    return [int(r[0]) for r in rows]


def document_hits(
    connection: Connection, query: str, limit: int, where: ColumnElement[bool] | None = None
) -> list[tuple[int, str]]:
    """(id, snippet) of the `limit` local documents best matching `query`, best first, among
    those `where` (over `local_documents`) keeps. Title words count double."""
    words = query_words(query)
    if not words:
        return []
    keep = where if where is not None else true()
    docs = local_documents
    if connection.dialect.name == "sqlite":
        fts = table("local_documents_fts", column("rowid"))
        match = text("local_documents_fts MATCH :q").bindparams(q=fts5_expression(words))
        statement = (
            select(docs.c.id, literal_column("snippet(local_documents_fts, 1, '', '', '…', 40)"))
            .select_from(fts.join(docs, docs.c.id == fts.c.rowid))
            .where(match, keep)
            .order_by(literal_column("bm25(local_documents_fts, 2.0, 1.0)"), docs.c.id)
            .limit(limit)
        )
        return [(int(r[0]), str(r[1])) for r in connection.execute(statement)]
    vector: ColumnElement[object] = literal_column(f"local_documents.{PG_VECTOR_COLUMN}")
    tsquery = _pg_query(words)
    ranked = (
        select(docs.c.id, func.ts_rank(vector, tsquery).label("rank"))
        .where(and_(vector.op("@@")(tsquery), keep))
        .order_by(literal_column("rank").desc(), docs.c.id)
        .limit(limit)
        .subquery()
    )
    # The headline is costly: made for the chosen rows only, outside the ranking query.
    options = f"MaxWords={SNIPPET_WORDS}, MinWords=15, StartSel='', StopSel='', HighlightAll=false"
    headline = func.ts_headline(literal_column("'english'"), docs.c.text, _pg_query(words), options)
    rows = connection.execute(
        select(docs.c.id, headline)
        .join(ranked, ranked.c.id == docs.c.id)
        .order_by(ranked.c.rank.desc(), docs.c.id)
    )
    return [(int(r[0]), str(r[1])) for r in rows]
