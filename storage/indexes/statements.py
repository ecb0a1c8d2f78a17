"""The authority statements' rows (`authority_statements`): what
`pipeline.authority.retrieval.AuthorityIndex` stores and reads. A statement travels as its
columns (`STATEMENT_COLUMNS`, in that order), its terms space-joined, its embedding as float32
little-endian bytes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import ColumnElement, and_, func, select, true

from storage.dialect import insert_ignoring_duplicates
from storage.indexes.rows import SqlRows
from storage.indexes.tables import authority_statements

_table = authority_statements
STATEMENT_COLUMNS = ("platform", "account", "post_id", "text", "created_at", "url")
_COLUMNS = tuple(_table.c[name] for name in STATEMENT_COLUMNS)


class SqlStatementRows(SqlRows):
    kind = "authority"
    label = "authority index"

    def known_posts(self, post_ids: Sequence[str]) -> set[tuple[str, str]]:
        """The (platform, post id) pairs stored among `post_ids`."""
        with self._reading() as connection:
            rows = connection.execute(
                select(_table.c.platform, _table.c.post_id).where(_table.c.post_id.in_(post_ids))
            )
            return {(str(p), str(i)) for p, i in rows}

    def insert_new(self, rows: Sequence[Mapping[str, Any]], dim: int) -> None:
        """Store rows (every column of `authority_statements` but `id`), skipping a post
        stored meanwhile, in one transaction noting the embedding size `dim`."""
        with self._writing(dim) as connection:
            connection.execute(insert_ignoring_duplicates(connection, _table), list(rows))

    def count(self) -> int:
        with self._reading() as connection:
            return int(connection.execute(select(func.count()).select_from(_table)).scalar_one())

    def accounts(self) -> set[str]:
        """Handles that have at least one stored statement."""
        with self._reading() as connection:
            return {str(r[0]) for r in connection.execute(select(_table.c.account).distinct())}

    def latest(self, platform: str, account: str) -> tuple[str, ...] | None:
        """The columns of the newest statement of `account` (a stored, lower-case handle)."""
        with self._reading() as connection:
            row = connection.execute(
                select(*_COLUMNS)
                .where(_table.c.platform == platform, _table.c.account == account)
                .order_by(_table.c.created_ts.desc(), _table.c.id.desc())
                .limit(1)
            ).first()
        return None if row is None else tuple(str(v) for v in row)

    def candidates(
        self, accounts: Sequence[str] | None, before_ts: float | None
    ) -> list[tuple[tuple[str, ...], str, bytes]]:
        """(columns, terms, embedding) of the statements of `accounts` (None: every account)
        published before `before_ts` (seconds since the epoch; None: any time), newest first."""
        where: list[ColumnElement[bool]] = [true()]
        if accounts is not None:
            where.append(_table.c.account.in_(accounts))
        if before_ts is not None:
            where.append(_table.c.created_ts < before_ts)
        with self._reading() as connection:
            rows = connection.execute(
                select(*_COLUMNS, _table.c.terms, _table.c.embedding)
                .where(and_(*where))
                .order_by(_table.c.created_ts.desc(), _table.c.id.desc())
            ).all()
        return [(tuple(str(v) for v in r[:6]), str(r[6]), bytes(r[7])) for r in rows]
