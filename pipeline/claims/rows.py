"""What the claim index (`pipeline.claims.index.ClaimIndex`) needs of the rows it keeps: one
row per record, with its key, claim text, record JSON and float32 embedding. Implemented in
SQL by `storage.indexes.claims.SqlClaimRows`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from pipeline.indexes.rows import IndexRows


class ClaimRows(IndexRows, Protocol):
    def stored_json(self, keys: Iterable[str]) -> dict[str, str]:
        """The stored record JSON of each of `keys` that is stored."""
        ...

    def replace(self, rows: Sequence[tuple[str, str, str, bytes]], dim: int) -> None:
        """Store (key, claim text, record JSON, embedding) rows, each replacing the one stored
        under its key, in one transaction noting the embedding size `dim`. A replaced row gets
        a new id, or the freed id of the last row."""
        ...

    def count(self) -> int: ...

    def last_row(self) -> tuple[int, str] | None:
        """The (id, key) of the row with the highest id."""
        ...

    def key_of(self, rowid: int) -> str | None: ...

    def embeddings(self, after: int = 0) -> list[tuple[int, bytes]]:
        """(id, embedding) of the rows with an id above `after`, by id."""
        ...

    def texts(self, ids: Sequence[int] | None = None) -> dict[int, str]:
        """The claim text of each of `ids` still stored (None: of every row)."""
        ...

    def records_json(self, ids: Sequence[int]) -> dict[int, str]:
        """The record JSON of each of `ids` still stored."""
        ...

    def fulltext_ids(self, words: list[str], limit: int) -> list[int]:
        """Ids of the `limit` rows whose claim best matches any of `words` by the database's
        full-text index, best first."""
        ...
