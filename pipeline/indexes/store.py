"""What every index kept in database tables shares: it opens its engine (or borrows the main
database's) with the index tables present, refuses a store built with another embedding size,
and disposes of the engine it opened when closed. `LocalIndex` and `AuthorityIndex` build on
it; the tables themselves are declared in `pipeline.indexes.tables`."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Self

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from pipeline.indexes.tables import (
    EmbeddingSizeMismatch,
    IndexSchemaError,
    check_embedding_dim,
    open_index_engine,
)


class StoredIndex:
    # The store's name: its embedding-size key ("local.embedding_dim") and its name in errors.
    kind: ClassVar[str]
    # What a store that cannot be opened raises, with a one-line message.
    error: ClassVar[type[Exception]]
    # How messages name the store, where "<kind> index" reads wrong ("claim index").
    noun: ClassVar[str] = ""

    _engine: Engine
    _owned: bool  # opened here (a URL or a path), so disposed of here
    _where: str  # the database, password hidden, for messages

    def _open(self, target: str | Path | Engine, dim: int | None) -> None:
        """Open `target` (an Engine, a database URL or a SQLite path); with `dim`, check the
        stored embedding size against it."""
        try:
            self._engine, self._owned = open_index_engine(target)
            if dim is not None:
                with self._engine.connect() as connection:
                    check_embedding_dim(connection, self.kind, dim, self.store_name)
        except (SQLAlchemyError, IndexSchemaError, EmbeddingSizeMismatch) as exc:
            raise self.error(f"cannot open the {self.store_name} in {target}: {exc}") from exc
        self._where = self._engine.url.render_as_string(hide_password=True)

    @property
    def engine(self) -> Engine:
        """The database the store lives in (for readers of its tables in `storage/`)."""
        return self._engine

    @property
    def store_name(self) -> str:
        return self.noun or f"{self.kind} index"

    def close(self) -> None:
        if self._owned:
            self._engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
