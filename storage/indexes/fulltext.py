"""Full-text search through the database's own engine, the SQL each speaks: SQLite FTS5 with
bm25, PostgreSQL `tsvector` with ts_rank, over the tables of `storage.indexes.tables` (which
database a connection is on is asked of `storage.dialect`).

The searches take the words a query searches for (the pipeline picks them:
`pipeline.indexes.words.query_words`); each dialect gets them OR-ed, so any word may match,
and a word that looks like query syntax stays plain text (FTS5: every word quoted;
PostgreSQL: `websearch_to_tsquery`, which never raises a syntax error). The two rank
differently (bm25 against ts_rank with title weight A), so results agree in substance, not
rank for rank.
"""

from __future__ import annotations

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

from storage.dialect import on_sqlite
from storage.indexes.tables import PG_VECTOR_COLUMN, claims, local_documents

SNIPPET_WORDS = 40


def fts5_expression(words: list[str]) -> str | None:
    """An FTS5 MATCH expression: each word quoted (so `AND`, `*`, `:` are plain text)."""
    return " OR ".join(f'"{w}"' for w in words) if words else None


def _pg_query(words: list[str]) -> ColumnElement[object]:
    return func.websearch_to_tsquery(literal_column("'english'"), " or ".join(words))


def claim_ids(connection: Connection, words: list[str], limit: int) -> list[int]:
    """Ids of the `limit` stored claims best matching any of `words` by full text, best
    first."""
    if not words:
        return []
    if on_sqlite(connection):
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
    connection: Connection, words: list[str], limit: int, where: ColumnElement[bool] | None = None
) -> list[tuple[int, str]]:
    """(id, snippet) of the `limit` local documents best matching any of `words`, best first,
    among those `where` (over `local_documents`) keeps. Title words count double."""
    if not words:
        return []
    keep = where if where is not None else true()
    docs = local_documents
    if on_sqlite(connection):
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
