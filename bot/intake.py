"""Intake: every summons becomes a request row before anything else happens.

The idempotency key is (platform, summoning post id): seeing the same summons twice creates
one request. The cursor moves only in the same transaction that stored the rows it covers.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from adapters.base import Adapter, PlatformError, RateLimited, Summons, jsonable
from bot.convert import claim_key
from pipeline.records import utcnow
from storage.db import Database
from storage.models import Cursor, RateBudgetRow, Request, RequestState

log = logging.getLogger(__name__)


@dataclass
class PollResult:
    adapter: str
    new: int = 0
    seen: int = 0
    error: str | None = None


def poll(adapter: Adapter, db: Database, mode: str) -> PollResult:
    result = PollResult(adapter=adapter.name)
    with db.session() as session:
        cursor_row = session.get(Cursor, adapter.name)
        now = utcnow()
        if cursor_row is not None and cursor_row.next_poll_at and cursor_row.next_poll_at > now:
            result.error = f"rate limited until {cursor_row.next_poll_at.isoformat()}"
            return result
        cursor = cursor_row.cursor if cursor_row else None
    try:
        fetched = adapter.fetch_summons(cursor)
    except PlatformError as exc:
        _record_poll_error(db, adapter.name, exc)
        result.error = f"{type(exc).__name__}: {exc}"
        log.warning("poll %s failed: %s", adapter.name, result.error)
        return result
    with db.transaction() as session:
        for summons in fetched.summons:
            result.seen += 1
            if _store(session, summons, mode):
                result.new += 1
        row = session.get(Cursor, adapter.name) or Cursor(adapter=adapter.name)
        if fetched.cursor is not None:
            row.cursor = fetched.cursor
        row.last_poll_at = utcnow()
        row.last_poll_count = result.new
        row.next_poll_at = None
        session.add(row)
        _store_budgets(session, adapter)
    return result


def _store(session: Session, summons: Summons, mode: str) -> bool:
    exists = session.scalars(
        select(Request.id).where(
            Request.platform == summons.platform, Request.summons_id == summons.id
        )
    ).first()
    if exists is not None:
        return False
    # A savepoint, so a concurrent intake that inserted the same summons first only undoes
    # this one row.
    with session.begin_nested():
        session.add(
            Request(
                platform=summons.platform,
                summons_id=summons.id,
                requester=summons.author,
                summons=jsonable(summons),
                target=jsonable(summons.target) if summons.target else None,
                state=RequestState.RECEIVED.value,
                mode=mode,
                target_key=claim_key(summons.target.text) if summons.target else None,
            )
        )
    return True


def _record_poll_error(db: Database, adapter: str, exc: PlatformError) -> None:
    with db.transaction() as session:
        row = session.get(Cursor, adapter) or Cursor(adapter=adapter)
        row.last_error = f"{type(exc).__name__}: {exc}"[:1000]
        row.last_error_at = utcnow()
        row.last_poll_at = utcnow()
        if isinstance(exc, RateLimited) and exc.reset_at is not None:
            # Scheduled around the reset time instead of sleeping inside the job.
            row.next_poll_at = exc.reset_at
        session.add(row)


def _store_budgets(session: Session, adapter: Adapter) -> None:
    for budget in adapter.budgets():
        row = session.get(RateBudgetRow, (adapter.name, budget.endpoint)) or RateBudgetRow(
            adapter=adapter.name, endpoint=budget.endpoint
        )
        row.limit = budget.limit
        row.remaining = budget.remaining
        row.reset_at = budget.reset_at
        row.updated_at = utcnow()
        session.add(row)
