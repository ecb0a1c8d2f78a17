"""Queries intake (`bot.requests.intake`) runs: which summons have a request already, the batch
insert of new requests, an adapter's poll cursor and rate budgets. The bot decides what to store and
writes no SQL of its own."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sqlalchemy import Row, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from storage.models import Cursor, RateBudgetRow, Request

_CHUNK = 500  # summons ids per IN list


def cursor(session: Session, adapter: str) -> Cursor | None:
    return session.get(Cursor, adapter)


def cursor_to_write(session: Session, adapter: str) -> Cursor:
    """The adapter's cursor row, created when it has none, in the session: set its fields."""
    row = session.get(Cursor, adapter) or Cursor(adapter=adapter)
    session.add(row)
    return row


def budget_to_write(session: Session, adapter: str, endpoint: str) -> RateBudgetRow:
    """The rate budget row of an adapter's endpoint, created when it has none, in the
    session: set its fields."""
    row = session.get(RateBudgetRow, (adapter, endpoint)) or RateBudgetRow(
        adapter=adapter, endpoint=endpoint
    )
    session.add(row)
    return row


def stored_before(session: Session, keys: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
    """Of these (platform, summons id), those that have a request already."""
    by_platform: dict[str, list[str]] = {}
    for platform, summons_id in keys:
        by_platform.setdefault(platform, []).append(summons_id)
    seen: set[tuple[str, str]] = set()
    for platform, ids in by_platform.items():
        for start in range(0, len(ids), _CHUNK):
            rows = session.scalars(
                select(Request.summons_id).where(
                    Request.platform == platform,
                    Request.summons_id.in_(ids[start : start + _CHUNK]),
                )
            )
            seen.update((platform, summons_id) for summons_id in rows)
    return seen


def insert_requests(session: Session, values: list[dict[str, Any]]) -> Sequence[Row[int, str, str]]:
    """Insert these requests in one statement, through Core (the ORM's unit of work cost more
    than the database; issue 12): their id, platform and summons_id, in no particular order."""
    return session.execute(
        insert(Request).returning(Request.id, Request.platform, Request.summons_id), values
    ).all()


def add_unless_taken(
    session: Session, request: Request, created: Callable[[Request], None]
) -> bool:
    """Add `request` (and what `created` writes with it) in a savepoint; False, with only that
    undone, when a concurrent intake inserted the same summons first."""
    try:
        with session.begin_nested():
            session.add(request)
            created(request)
    except IntegrityError:
        return False
    return True
