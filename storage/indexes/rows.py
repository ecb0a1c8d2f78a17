"""What every store of index rows shares: its engine (opened from a path, ":memory:" or a URL,
or the main database's, borrowed), the embedding-size check, database failures raised as
`IndexStoreError`, and disposing of the engine it opened when closed. The stores of
`storage.indexes.claims`, `.statements` and `.documents` build on it; the pipeline's stores
(`pipeline.claims.index`, `pipeline.authority.retrieval`, `pipeline.search.local_index`) are
handed one and write no SQL themselves."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar, Self

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from pipeline.records import IndexStoreError
from storage.indexes.tables import check_embedding_dim, open_index_engine


class SqlRows:
    # The store's name: its embedding-size key ("local.embedding_dim").
    kind: ClassVar[str]
    # How messages name the store ("claim index").
    label: ClassVar[str]
    # Whether a closed store refuses work (a borrowed engine would otherwise go on serving it).
    refuse_when_closed: ClassVar[bool] = False

    def __init__(self, engine: Engine, *, owned: bool = False) -> None:
        """Rows in `engine`, whose index tables are present; `owned`: disposed of on close."""
        self._engine = engine
        self._owned = owned
        self._closed = False
        self.where = engine.url.render_as_string(hide_password=True)

    @classmethod
    def open(cls, target: str | Path | Engine) -> Self:
        """The store in `target`: an Engine (borrowed), a database URL ("…://…") or a SQLite
        path (":memory:" for a throw-away one), the tables created in a standalone database.
        Raises `IndexStoreError` when it cannot be opened."""
        try:
            engine, owned = open_index_engine(target)
        except (SQLAlchemyError, IndexStoreError) as exc:
            raise IndexStoreError(f"cannot open the {cls.label} in {target}: {exc}") from exc
        return cls(engine, owned=owned)

    def check_embedding_dim(self, dim: int) -> None:
        """Refuse a store built with another embedding size than `dim` (read only)."""
        with self._reading() as connection:
            check_embedding_dim(connection, self.kind, dim, self.label)

    @contextmanager
    def _reading(self) -> Iterator[Connection]:
        with self._translated(), self._engine.connect() as connection:
            yield connection

    @contextmanager
    def _writing(self, dim: int | None) -> Iterator[Connection]:
        """A transaction that first notes (or checks) the embedding size `dim`, when given."""
        with self._translated(), self._engine.begin() as connection:
            if dim is not None:
                check_embedding_dim(connection, self.kind, dim, self.label, record=True)
            yield connection

    @contextmanager
    def _translated(self) -> Iterator[None]:
        if self._closed and self.refuse_when_closed:
            raise IndexStoreError(f"the {self.label} in {self.where} is closed")
        try:
            yield
        except SQLAlchemyError as exc:
            raise IndexStoreError(str(exc)) from exc

    def close(self) -> None:
        self._closed = True
        if self._owned:
            self._engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
