"""Intake: every summons becomes a request row before anything else happens.

The idempotency key is (platform, summoning post id): seeing the same summons twice creates
one request. The cursor moves only in the same transaction that stored the rows it covers.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from adapters.base import (
    Adapter,
    PlatformError,
    RateBudget,
    RateLimited,
    Summons,
    TargetStatus,
    jsonable,
    storable,
)
from bot.requests import lifecycle
from bot.requests.to_pipeline import claim_key
from pipeline.records import utcnow
from storage import intake as intake_rows
from storage.db import Database, Session, is_lock_error
from storage.models import Request, RequestState
from storage.requests import request_id_for

log = logging.getLogger(__name__)


@dataclass
class PollResult:
    adapter: str
    new: int = 0
    seen: int = 0
    error: str | None = None
    deferred: bool = False  # not polled: waiting out a rate limit, as planned (not a failure)


def poll(adapter: Adapter, db: Database, mode: str) -> PollResult:
    """One poll. A failed fetch is recorded on the adapter's cursor (status and metrics show
    it) instead of raised; a summons that cannot be stored becomes a skipped request with the
    reason, and the others are stored. Only a database lock error is raised (the caller
    retries the poll: nothing was committed)."""
    result = PollResult(adapter=adapter.name)
    with db.session() as session:
        cursor_row = intake_rows.cursor(session, adapter.name)
        now = utcnow()
        if cursor_row is not None and cursor_row.next_poll_at and cursor_row.next_poll_at > now:
            result.error = f"rate limited until {cursor_row.next_poll_at.isoformat()}"
            result.deferred = True
            return result
        cursor = cursor_row.cursor if cursor_row else None
    try:
        fetched = adapter.fetch_summons(cursor)
    except Exception as exc:  # an adapter's bug must not stop the bot or hide from status
        result.error = storable(f"{type(exc).__name__}: {exc}")
        if isinstance(exc, PlatformError):
            log.warning("poll %s failed: %s", adapter.name, result.error)
        else:
            log.exception("poll %s failed", adapter.name)
        reset_at = exc.reset_at if isinstance(exc, RateLimited) else None
        _record_poll_error(db, adapter.name, result.error, reset_at)
        return result
    try:
        budgets = adapter.budgets()
    except Exception:  # rate-limit figures are for status only: never worth the summons
        log.exception("poll %s: reading rate-limit budgets failed", adapter.name)
        budgets = []
    unstored: list[str] = []
    with db.transaction() as session:
        stored = _store_all(session, fetched.summons, mode)
        if stored is None:  # the database refused the batch: one by one, culprits set aside
            stored = 0
            for summons in fetched.summons:
                try:
                    request = _store(session, summons, mode)
                except Exception as exc:
                    if is_lock_error(exc):
                        raise
                    log.exception(
                        "poll %s: summons %r could not be stored", adapter.name, summons.id
                    )
                    request = _store_unstorable(session, summons, mode, exc)
                    if request is None:
                        unstored.append(storable(summons.id))
                if request is not None:
                    stored += 1
        result.seen = len(fetched.summons)
        result.new = stored
        row = intake_rows.cursor_to_write(session, adapter.name)
        if fetched.cursor is not None:
            row.cursor = fetched.cursor
        row.last_poll_at = utcnow()
        row.last_poll_count = result.new
        row.next_poll_at = None
        _store_budgets(session, adapter.name, budgets)
    if unstored:
        result.error = f"{len(unstored)} summons could not be stored: {', '.join(unstored)}"
        _record_poll_error(db, adapter.name, result.error, None)
    return result


def _store_all(session: Session, fetched: list[Summons], mode: str) -> int | None:
    """The new requests for every summons not stored before, written at once: one query for
    the ones already there, one insert for the rows and one for their events, through Core
    (the ORM's unit of work cost more than the database; issue 12). How many were stored;
    None, with nothing written, when the database refuses any of them (a summons it cannot
    store, a concurrent intake that stored one first): the caller then stores them one by
    one, which sets each culprit aside."""
    if not fetched:
        return 0
    try:
        with session.begin_nested():
            seen = intake_rows.stored_before(session, [(s.platform, s.id) for s in fetched])
            fresh: dict[tuple[str, str], Summons] = {}
            for summons in fetched:
                key = (summons.platform, summons.id)
                if key not in seen and key not in fresh:
                    fresh[key] = summons
            if not fresh:
                return 0
            # The ids come back with their keys: no need for them in the order sent.
            ids = intake_rows.insert_requests(
                session, [_request_values(s, mode) for s in fresh.values()]
            )
            lifecycle.created_rows(
                session,
                [
                    lifecycle.Born(
                        row.id,
                        row.platform,
                        RequestState.RECEIVED,
                        _intake(fresh[(row.platform, row.summons_id)]),
                        f"summons {row.summons_id}",
                    )
                    for row in sorted(ids, key=lambda r: r.id)
                ],
            )
    except Exception as exc:
        if is_lock_error(exc):
            raise
        log.info("intake: batch refused (%s); storing one by one", type(exc).__name__)
        return None
    return len(ids)


def _new_request(summons: Summons, mode: str) -> Request:
    return Request(**_request_values(summons, mode))


def _request_values(summons: Summons, mode: str) -> dict[str, Any]:
    return {
        "platform": summons.platform,
        "summons_id": summons.id,
        "requester": summons.author,
        "summons": jsonable(summons),
        "target": jsonable(summons.target) if summons.target else None,
        "state": RequestState.RECEIVED.value,
        "mode": mode,
        "target_key": claim_key(summons.target.text) if summons.target else None,
    }


def _store(session: Session, summons: Summons, mode: str) -> Request | None:
    """The new request for `summons`, or None when it was stored before."""
    if request_id_for(session, summons.platform, summons.id) is not None:
        return None
    request = _new_request(summons, mode)
    # A savepoint, so a concurrent intake that inserted the same summons first only undoes
    # this one row.
    taken = intake_rows.add_unless_taken(
        session,
        request,
        lambda r: lifecycle.created(session, r, _intake(summons), f"summons {summons.id}"),
    )
    return request if taken else None


def _store_unstorable(
    session: Session, summons: Summons, mode: str, exc: Exception
) -> Request | None:
    """Record a summons the database refused (text it cannot encode, say) as a skipped
    request with the reason, keyed by its id made storable, so it is seen and not retried.
    None when even that fails."""
    key = storable(summons.id)[:128]
    reason = storable(f"could not store the summons: {type(exc).__name__}: {exc}")[:1000]
    try:
        if request_id_for(session, summons.platform, key):
            return None
        request = Request(
            platform=summons.platform,
            summons_id=key,
            requester=storable(summons.author)[:256],
            summons=jsonable(
                Summons(
                    platform=summons.platform,
                    id=key,
                    author=storable(summons.author),
                    text=storable(summons.text),
                    created_at=summons.created_at,
                    target_status=TargetStatus.UNAVAILABLE,
                    target_reason=reason,
                )
            ),
            state=RequestState.SKIPPED.value,
            mode=mode,
            reason=reason,
        )
        with session.begin_nested():
            session.add(request)
            lifecycle.created(session, request, _intake(summons), reason)
    except Exception as again:
        if is_lock_error(again):
            raise
        log.exception("poll: summons %r could not be recorded as skipped either", key)
        return None
    return request


def _intake(summons: Summons) -> lifecycle.Actor:
    return lifecycle.Actor(lifecycle.ActorKind.INTAKE, summons.platform)


def _record_poll_error(db: Database, adapter: str, error: str, reset_at: datetime | None) -> None:
    with db.transaction() as session:
        row = intake_rows.cursor_to_write(session, adapter)
        # One timestamp for both: the metrics call a poll failing when its error is not
        # older than the poll.
        now = utcnow()
        row.last_error = error[:1000]
        row.last_error_at = now
        row.last_poll_at = now
        if reset_at is not None:
            # Scheduled around the reset time instead of sleeping inside the job.
            row.next_poll_at = reset_at


def _store_budgets(session: Session, adapter: str, budgets: list[RateBudget]) -> None:
    for budget in budgets:
        row = intake_rows.budget_to_write(session, adapter, budget.endpoint)
        row.limit = budget.limit
        row.remaining = budget.remaining
        row.reset_at = budget.reset_at
        row.updated_at = utcnow()
