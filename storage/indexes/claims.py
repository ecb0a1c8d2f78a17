"""The claim index's rows (`claims`): what `pipeline.claims.index.ClaimIndex` stores and reads.
Records travel as their JSON, embeddings as float32 little-endian bytes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import delete, func, insert, select

from storage.indexes.fulltext import claim_ids
from storage.indexes.rows import SqlRows
from storage.indexes.tables import claims

# Ids and keys per IN (...) list: under every database's limit on bound parameters.
_PER_QUERY = 10_000
_KEYS_PER_QUERY = 500


class SqlClaimRows(SqlRows):
    kind = "claims"
    label = "claim index"

    def stored_json(self, keys: Iterable[str]) -> dict[str, str]:
        """The stored record JSON of each of `keys` (a record's `key`) that is stored."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, str] = {}
        with self._reading() as connection:
            for start in range(0, len(wanted), _KEYS_PER_QUERY):
                chunk = wanted[start : start + _KEYS_PER_QUERY]
                rows = connection.execute(
                    select(claims.c.key, claims.c.record_json).where(claims.c.key.in_(chunk))
                )
                found.update({str(key): str(record) for key, record in rows})
        return found

    def replace(self, rows: Sequence[tuple[str, str, str, bytes]], dim: int) -> None:
        """Store (key, claim text, record JSON, embedding) rows, each replacing the row stored
        under its key, in one transaction that notes the embedding size `dim`."""
        with self._writing(dim) as connection:
            # A replaced record is stored anew: under a new id, or in SQLite under the last
            # row's freed id (the reader compares that row's key, so no stale row is kept).
            connection.execute(delete(claims).where(claims.c.key.in_([r[0] for r in rows])))
            connection.execute(
                insert(claims),
                [
                    {"key": key, "claim_text": text, "record_json": record, "embedding": vector}
                    for key, text, record, vector in rows
                ],
            )

    def count(self) -> int:
        with self._reading() as connection:
            return int(connection.execute(select(func.count()).select_from(claims)).scalar_one())

    def last_row(self) -> tuple[int, str] | None:
        """The (id, key) of the row with the highest id: max(id) grows on every insert or
        replacement, also by another process, and reads from the primary key alone."""
        with self._reading() as connection:
            last = connection.execute(
                select(claims.c.id, claims.c.key).order_by(claims.c.id.desc()).limit(1)
            ).first()
        return None if last is None else (int(last[0]), str(last[1]))

    def key_of(self, rowid: int) -> str | None:
        with self._reading() as connection:
            key = connection.execute(
                select(claims.c.key).where(claims.c.id == rowid)
            ).scalar_one_or_none()
        return None if key is None else str(key)

    def embeddings(self, after: int = 0) -> list[tuple[int, bytes]]:
        """(id, embedding) of the rows with an id above `after`, by id."""
        with self._reading() as connection:
            rows = connection.execute(
                select(claims.c.id, claims.c.embedding)
                .where(claims.c.id > after)
                .order_by(claims.c.id)
            ).all()
        return [(int(i), bytes(e)) for i, e in rows]

    def texts(self, ids: Sequence[int] | None = None) -> dict[int, str]:
        """The claim text of each row of `ids` still stored (None: of every row)."""
        statement = select(claims.c.id, claims.c.claim_text)
        with self._reading() as connection:
            if ids is None:
                return {int(i): str(t) for i, t in connection.execute(statement)}
            found: dict[int, str] = {}
            for at in range(0, len(ids), _PER_QUERY):
                chunk = list(ids[at : at + _PER_QUERY])
                rows = connection.execute(statement.where(claims.c.id.in_(chunk)))
                found.update({int(i): str(t) for i, t in rows})
            return found

    def records_json(self, ids: Sequence[int]) -> dict[int, str]:
        """The record JSON of each row of `ids` still stored."""
        found: dict[int, str] = {}
        with self._reading() as connection:
            for at in range(0, len(ids), _PER_QUERY):
                chunk = list(ids[at : at + _PER_QUERY])
                rows = connection.execute(
                    select(claims.c.id, claims.c.record_json).where(claims.c.id.in_(chunk))
                )
                found.update({int(i): str(p) for i, p in rows})
        return found

    def fulltext_ids(self, words: list[str], limit: int) -> list[int]:
        """Ids of the `limit` rows whose claim best matches any of `words`, best first."""
        with self._reading() as connection:
            return claim_ids(connection, words, limit)
