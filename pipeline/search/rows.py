"""What the local search index (`pipeline.search.local_index.LocalIndex`) needs of the rows
it keeps: documents unique by canonical URL, each with its passages. Implemented in SQL by
`storage.indexes.documents.SqlDocumentRows`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypedDict

from pipeline.indexes.rows import IndexRows
from pipeline.records import SiteFilter


class DocumentRow(TypedDict):
    canonical_url: str
    url_key: str  # canonical URL without its scheme: path prefixes
    host: str
    domain: str
    content_hash: str
    embedded: bool
    title: str
    text: str
    doc_json: str  # the Document without its text


class DocumentRows(IndexRows, Protocol):
    def content_state(self, canonical_url: str) -> tuple[str, bool] | None:
        """The stored (content hash, embedded) of the document at `canonical_url`."""
        ...

    def replace(
        self, document: DocumentRow, passages: Sequence[tuple[str, bytes | None]], dim: int | None
    ) -> None:
        """Store `document` with its (text, embedding) passages in order, replacing the one
        stored under its canonical URL, in one transaction noting the embedding size `dim`."""
        ...

    def document(self, canonical_url: str) -> tuple[str, str] | None:
        """The stored (doc JSON, text) of the document at `canonical_url`."""
        ...

    def count(self) -> int: ...

    def passage_version(self) -> int:
        """A number that grows on every write of passages (the highest passage id)."""
        ...

    def passage_embeddings(self) -> list[tuple[int, int, bytes]]:
        """(passage id, doc id, embedding) of the passages stored with one, grouped by
        document, in passage order."""
        ...

    def allowed(self, sites: SiteFilter) -> set[int]:
        """Ids of the documents `sites` keeps."""
        ...

    def fulltext_hits(
        self, words: list[str], limit: int, sites: SiteFilter | None
    ) -> list[tuple[int, str]]:
        """(id, snippet) of the `limit` documents `sites` keeps (None: all) best matching any
        of `words` by the database's full-text index, best first; title words count double."""
        ...

    def passage_texts(self, ids: Sequence[int]) -> dict[int, str]: ...

    def documents(self, ids: Sequence[int]) -> dict[int, tuple[str, str, str]]:
        """(domain, doc JSON, text) of each of the documents `ids` still stored."""
        ...
