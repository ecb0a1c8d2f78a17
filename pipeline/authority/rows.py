"""What the authority index (`pipeline.authority.retrieval.AuthorityIndex`) needs of the rows
it keeps: one row per statement, unique by platform and post id. A statement's columns travel
in the order platform, account, post id, text, created at (ISO 8601), URL. Implemented in SQL
by `storage.indexes.statements.SqlStatementRows`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypedDict

from pipeline.indexes.rows import IndexRows


class StatementRow(TypedDict):
    platform: str
    account: str  # handle, lower-case, without "@"
    post_id: str
    text: str
    created_at: str  # ISO 8601, UTC
    created_ts: float  # seconds since the epoch: the "before" filter
    url: str
    terms: str  # space-joined `lexical.terms`, computed once
    embedding: bytes  # float32, little-endian


class StatementRows(IndexRows, Protocol):
    def known_posts(self, post_ids: Sequence[str]) -> set[tuple[str, str]]:
        """The (platform, post id) pairs stored among `post_ids`."""
        ...

    def insert_new(self, rows: Sequence[StatementRow], dim: int) -> None:
        """Store `rows`, skipping a post stored meanwhile by another process, in one
        transaction noting the embedding size `dim`."""
        ...

    def count(self) -> int: ...

    def accounts(self) -> set[str]: ...

    def latest(self, platform: str, account: str) -> tuple[str, ...] | None:
        """The columns of the newest statement of `account` (stored lower-case)."""
        ...

    def candidates(
        self, accounts: Sequence[str] | None, before_ts: float | None
    ) -> list[tuple[tuple[str, ...], str, bytes]]:
        """(columns, terms, embedding) of the statements of `accounts` (None: all) published
        before `before_ts` (None: any time), newest first, ties by the later stored."""
        ...
