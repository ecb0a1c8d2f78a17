"""The local search index's rows (`local_documents`, `local_passages`): what
`pipeline.search.local_index.LocalIndex` stores and reads. A document travels as its columns,
a passage as its text and float32 little-endian embedding (None: stored without one)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import ColumnElement, delete, false, func, insert, or_, select

from pipeline.records import SiteFilter
from storage.indexes.fulltext import document_hits
from storage.indexes.rows import SqlRows
from storage.indexes.tables import local_documents, local_passages

_docs = local_documents
_passages = local_passages


def _condition(sites: SiteFilter) -> ColumnElement[bool]:
    """A condition over `local_documents` keeping what `sites` names."""
    clauses: list[ColumnElement[bool]] = []
    if sites.names:
        clauses += [_docs.c.domain.in_(sites.names), _docs.c.host.in_(sites.names)]
    # substr, not LIKE: a URL's "%" and "_" stay literal on every database.
    clauses += [func.substr(_docs.c.url_key, 1, len(p)) == p for p in sites.prefixes]
    return or_(false(), *clauses)


class SqlDocumentRows(SqlRows):
    kind = "local"
    label = "local index"
    refuse_when_closed = True

    def content_state(self, canonical_url: str) -> tuple[str, bool] | None:
        """The stored (content hash, embedded) of the document at `canonical_url`."""
        with self._reading() as connection:
            row = connection.execute(
                select(_docs.c.content_hash, _docs.c.embedded).where(
                    _docs.c.canonical_url == canonical_url
                )
            ).first()
        return None if row is None else (str(row[0]), bool(row[1]))

    def replace(
        self,
        document: Mapping[str, Any],
        passages: Sequence[tuple[str, bytes | None]],
        dim: int | None,
    ) -> None:
        """Store a document (every column of `local_documents` but `id`) with its passages,
        replacing the one stored under its canonical URL, in one transaction that notes the
        embedding size `dim` (None: stored without embeddings)."""
        with self._writing(dim) as connection:
            connection.execute(
                delete(_docs).where(_docs.c.canonical_url == document["canonical_url"])
            )
            doc_id = connection.execute(
                insert(_docs).returning(_docs.c.id), dict(document)
            ).scalar_one()
            connection.execute(
                insert(_passages),
                [
                    {"doc_id": doc_id, "idx": i, "text": text, "embedding": vector}
                    for i, (text, vector) in enumerate(passages)
                ],
            )

    def document(self, canonical_url: str) -> tuple[str, str] | None:
        """The stored (doc JSON, text) of the document at `canonical_url`."""
        with self._reading() as connection:
            row = connection.execute(
                select(_docs.c.doc_json, _docs.c.text).where(_docs.c.canonical_url == canonical_url)
            ).first()
        return None if row is None else (str(row[0]), str(row[1]))

    def count(self) -> int:
        with self._reading() as connection:
            return int(connection.execute(select(func.count()).select_from(_docs)).scalar_one())

    def passage_version(self) -> int:
        """The highest passage id: it grows on every insert or replacement, also by another
        process, and reads from the primary key alone (count(*) scanned every embedding)."""
        with self._reading() as connection:
            top = connection.execute(select(func.coalesce(func.max(_passages.c.id), 0)))
            return int(top.scalar_one())

    def passage_embeddings(self) -> list[tuple[int, int, bytes]]:
        """(passage id, doc id, embedding) of the passages stored with one, grouped by
        document, in passage order."""
        with self._reading() as connection:
            rows = connection.execute(
                select(_passages.c.id, _passages.c.doc_id, _passages.c.embedding)
                .where(_passages.c.embedding.is_not(None))
                .order_by(_passages.c.doc_id, _passages.c.idx)
            ).all()
        return [(int(p), int(d), bytes(e)) for p, d, e in rows]

    def allowed(self, sites: SiteFilter) -> set[int]:
        """Ids of the documents `sites` keeps."""
        with self._reading() as connection:
            rows = connection.execute(select(_docs.c.id).where(_condition(sites)))
            return {int(r[0]) for r in rows}

    def fulltext_hits(
        self, words: list[str], limit: int, sites: SiteFilter | None
    ) -> list[tuple[int, str]]:
        """(id, snippet) of the `limit` documents `sites` keeps best matching any of `words`,
        best first."""
        with self._reading() as connection:
            where = None if sites is None else _condition(sites)
            return document_hits(connection, words, limit, where)

    def passage_texts(self, ids: Sequence[int]) -> dict[int, str]:
        with self._reading() as connection:
            rows = connection.execute(
                select(_passages.c.id, _passages.c.text).where(_passages.c.id.in_(list(ids)))
            )
            return {int(r[0]): str(r[1]) for r in rows}

    def documents(self, ids: Sequence[int]) -> dict[int, tuple[str, str, str]]:
        """(domain, doc JSON, text) of each of the documents `ids` still stored."""
        with self._reading() as connection:
            rows = connection.execute(
                select(_docs.c.id, _docs.c.domain, _docs.c.doc_json, _docs.c.text).where(
                    _docs.c.id.in_(list(ids))
                )
            )
            return {int(r[0]): (str(r[1]), str(r[2]), str(r[3])) for r in rows}
