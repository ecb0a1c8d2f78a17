"""What every index store needs of the rows it keeps in a database, whichever store: a place
to name in messages, the embedding-size check, and closing. Each store's own protocol adds its
reads and writes (`pipeline.claims.rows`, `pipeline.authority.rows`, `pipeline.search.rows`);
`storage.indexes` implements them in SQL, and whoever holds the database (the bot, the
evaluations, the benchmarks) opens them and hands them to the stores.

Every method raises `pipeline.records.IndexStoreError` when the database fails; the stores
raise it on as their own error.
"""

from __future__ import annotations

from typing import Protocol


class IndexRows(Protocol):
    # The database, password hidden, for messages.
    where: str

    def check_embedding_dim(self, dim: int) -> None:
        """Raise `IndexStoreError` when the rows were embedded with another size than `dim`."""
        ...

    def close(self) -> None:
        """Release the database when these rows opened it (a borrowed one stays open)."""
        ...
