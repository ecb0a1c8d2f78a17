"""What every index kept in database rows shares: it refuses rows embedded with another size
than its embedder makes, raises database failures as its own error in one line, and closes its
rows when closed. `ClaimIndex`, `LocalIndex` and `AuthorityIndex` build on it; their rows
(`pipeline.indexes.rows`) come from `storage.indexes`, opened by whoever holds the database."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar, Self

from pipeline.indexes.rows import IndexRows
from pipeline.records import IndexStoreError


class StoredIndex:
    # The store's name in errors: "<kind> index", unless `noun` says otherwise.
    kind: ClassVar[str]
    # What a store that cannot be used raises, with a one-line message.
    error: ClassVar[type[Exception]]
    # How messages name the store, where "<kind> index" reads wrong ("claim index").
    noun: ClassVar[str] = ""

    _rows: IndexRows

    def _open(self, rows: IndexRows, dim: int | None) -> None:
        """Keep `rows`; with `dim`, check their embedding size against it."""
        self._rows = rows
        if dim is not None:
            try:
                rows.check_embedding_dim(dim)
            except IndexStoreError as exc:
                raise self.error(
                    f"cannot open the {self.store_name} in {self._where}: {exc}"
                ) from exc

    @property
    def _where(self) -> str:
        return self._rows.where

    @contextmanager
    def _failing_as(self, what: str) -> Iterator[None]:
        """Raise a database failure inside as the store's error: "<what>: <the failure>"."""
        try:
            yield
        except IndexStoreError as exc:
            raise self.error(f"{what}: {exc}") from exc

    @property
    def store_name(self) -> str:
        return self.noun or f"{self.kind} index"

    def close(self) -> None:
        self._rows.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
