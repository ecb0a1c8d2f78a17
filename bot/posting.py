"""Posting a decided reply, exactly once.

The reply text is committed (state `posting`) before the platform call; the platform's reply id
after it. Each attempt is claimed in its own commit (post_attempts + 1, with a lease), so two
workers never post the same request, and an attempt that finds earlier attempts first asks the
platform whether our reply already landed (a crash may have come between the call and the
commit); so does the first attempt on a summons older than this database's records (the
database may be new, its predecessor deleted). Rate limits are scheduled around, never slept
through.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from sqlalchemy import select, update

from adapters.base import (
    AccessDenied,
    Adapter,
    DuplicateReply,
    PlatformError,
    RateLimited,
    ReplyForbidden,
    ReplyReceipt,
    Summons,
)
from bot import lifecycle, overrides
from bot.config import RuntimeConfig
from bot.logs import log_transition
from pipeline import guard
from pipeline.records import utcnow
from storage.db import Database, DatabaseBusy, is_lock_error, retry_when_locked
from storage.models import Request, RequestState
from storage.repositories import latest_decision_row

log = logging.getLogger(__name__)
_POSTER = lifecycle.Actor(lifecycle.ActorKind.POSTER)

LEASE = timedelta(minutes=5)  # how long one attempt holds a request before others may retry
HOLD_RECHECK = timedelta(minutes=1)  # a reply the kill switch holds is looked at again after


def due_posts(db: Database) -> list[int]:
    now = utcnow()
    with db.session() as session:
        return list(
            session.scalars(
                select(Request.id)
                .where(
                    Request.state == RequestState.POSTING.value,
                    (Request.next_attempt_at.is_(None)) | (Request.next_attempt_at <= now),
                )
                .order_by(Request.id)
            )
        )


def post_due(db: Database, adapters: dict[str, Adapter], cfg: RuntimeConfig) -> int:
    posted = 0
    for request_id in due_posts(db):
        adapter = adapters.get(_platform_of(db, request_id))
        try:
            if adapter is not None and post_one(db, adapter, request_id, cfg):
                posted += 1
        except Exception as exc:
            # One request that cannot be posted (a bug, a row the code cannot read) must not
            # hold up every later one; a lock is the caller's to retry. It stays in
            # `posting` (its reply may have gone out) and is tried again after a lease,
            # which asks the platform first.
            if is_lock_error(exc) or isinstance(exc, DatabaseBusy):
                raise
            log.exception("request %s: posting failed", request_id)
            _set_aside(db, request_id, f"internal error: {exc!r}")
    return posted


def _platform_of(db: Database, request_id: int) -> str:
    with db.session() as session:
        request = session.get(Request, request_id)
        return request.platform if request else ""


def post_one(db: Database, adapter: Adapter, request_id: int, cfg: RuntimeConfig) -> bool:
    """Try to post one request in `posting`. True once its reply is known to be on the
    platform."""
    claimed = _claim(db, request_id)
    if claimed is None:
        return False
    summons, text, attempt = claimed
    # The kill switch, read now from the database: a pause or a dry-run set a moment ago in
    # the review app (or `factnote review pause`) stops this post in the running bot.
    hold = overrides.posting_hold(db, summons.platform)
    if hold is not None:
        _hold(db, request_id, hold)
        return False
    try:
        if attempt > 1 or _older_than_our_records(db, summons):
            receipt = adapter.find_reply(summons)
            if receipt is not None:
                _mark_posted(db, request_id, receipt, "reconciled: reply found on the platform")
                return True
        receipt = adapter.post_reply(summons, text, _approved_links(db, request_id, text))
    except DuplicateReply as exc:
        # A duplicate refusal is no proof of posting (the same text may have gone to someone
        # else): posted only with a receipt, and the same text is never sent again.
        found = _safe_find(adapter, summons)
        if found is None:
            _fail(db, request_id, f"duplicate text, reply not found: {exc}")
            return False
        _mark_posted(db, request_id, found, f"platform reports a duplicate: {exc}")
        return True
    except AccessDenied as exc:
        # The account or app may not post at all: alert, keep the request, burn no attempt.
        log.error("request %s: %s cannot post: %s", request_id, adapter.name, exc)
        _retry_later(db, request_id, exc, utcnow() + timedelta(minutes=15))
        with db.transaction() as session:
            request = session.get(Request, request_id)
            if request is not None and request.post_attempts > 0:
                request.post_attempts -= 1
        return False
    except RateLimited as exc:
        _retry_later(db, request_id, exc, exc.reset_at or utcnow() + timedelta(minutes=15))
        return False
    except ReplyForbidden as exc:
        _fail(db, request_id, f"reply forbidden: {exc}")
        return False
    except PlatformError as exc:
        if not exc.retryable or attempt >= cfg.max_attempts:
            _fail(db, request_id, f"posting failed after {attempt} attempt(s): {exc}")
        else:
            _retry_later(db, request_id, exc, lifecycle.retry_at(attempt, cfg.retry_backoff_s))
        return False
    # The reply is out: recording it must not be lost to another process's lock.
    retry_when_locked(
        lambda: _mark_posted(db, request_id, receipt, ""),
        what=f"request {request_id}: recording the posted reply",
        attempts=cfg.db_lock_attempts,
        backoff_s=cfg.db_lock_backoff_s,
    )
    return True


# How far a platform's clock may run ahead of ours.
CLOCK_SKEW = timedelta(minutes=10)


def _older_than_our_records(db: Database, summons: Summons) -> bool:
    """Whether the summons predates everything this database has taken in from its platform,
    so it may have been answered under a database that is gone (`rm factnote.db`): then the
    first attempt, too, asks the platform whether our reply exists before posting.

    Why not "created before this process started": a restart loses no memory (every attempt
    is committed before the platform call, and later attempts already look), while cron runs
    of `factnote run --once` would then look before every post, paying an X timeline read
    each time. The database's first intake is the horizon of what it can know: a summons
    made after it has all its attempts recorded here, so only the backlog a new database
    starts with is looked up (once each). Not covered: a database restored from an older
    backup (its horizon is old); there X's duplicate-text refusal is the last guard."""
    with db.session() as session:
        horizon = session.scalars(
            select(Request.created_at)
            .where(Request.platform == summons.platform)
            .order_by(Request.id)
            .limit(1)
        ).first()
    return horizon is None or summons.created_at < horizon + CLOCK_SKEW


def _approved_links(db: Database, request_id: int, text: str) -> list[str]:
    """The URLs of `text` (what is about to be posted) that pass the guard's URL rules against
    the request's latest decision (its evidence pages and the URLs the guard approved in its
    draft): the only strings an adapter may turn into links.

    Read from the text itself, so a moderator's edit (which the guard checked against the same
    evidence) links what it cites, and nothing else can become a link."""
    with db.session() as session:
        decision = latest_decision_row(session, request_id)
        if decision is None:
            return []
        allowed = [e.url for e in decision.evidence] + [str(u) for u in decision.urls or []]
    return guard.approved_urls(guard.find_urls(text), allowed)


def _claim(db: Database, request_id: int) -> tuple[Summons, str, int] | None:
    with db.transaction() as session:
        request = session.get(Request, request_id)
        if request is None or request.state != RequestState.POSTING.value:
            return None
        seen = request.post_attempts
        claimed = session.execute(
            update(Request)
            .where(
                Request.id == request_id,
                Request.state == RequestState.POSTING.value,
                Request.post_attempts == seen,
                # Another poster's claim (its lease) still runs: leave the request to it. Without
                # this, a worker posting right after its decision and the scheduler's `post_due`
                # could both claim, one after the other, and both post (issue 12 crash test).
                Request.next_attempt_at.is_(None) | (Request.next_attempt_at <= utcnow()),
            )
            # The holder is named so that a restart on this host can tell a claim its dead
            # predecessor left (made due again at once) from a live process's.
            .values(
                post_attempts=seen + 1,
                next_attempt_at=utcnow() + LEASE,
                lease_owner=lifecycle.process_name(),
            )
            .execution_options(synchronize_session=False)
        )
        if claimed.rowcount != 1:  # type: ignore[attr-defined]
            return None
        if not request.reply_text:
            raise ValueError(f"request #{request_id} is posting without a reply text")
        return Summons.model_validate(request.summons), request.reply_text, seen + 1


def _safe_find(adapter: Adapter, summons: Summons) -> ReplyReceipt | None:
    try:
        return adapter.find_reply(summons)
    except PlatformError:
        return None


def _mark_posted(db: Database, request_id: int, receipt: ReplyReceipt | None, note: str) -> None:
    with db.transaction() as session:
        request = session.get(Request, request_id)
        assert request is not None
        request.reply_id = receipt.reply_id if receipt else None
        request.posted_at = receipt.posted_at if receipt else utcnow()
        request.next_attempt_at = None
        if note:
            request.reason = note
        why = note or (f"reply {receipt.reply_id}" if receipt and receipt.reply_id else "")
        lifecycle.transition(session, request, RequestState.POSTED, why, _POSTER)


def _retry_later(db: Database, request_id: int, exc: PlatformError, when: datetime) -> None:
    with db.transaction() as session:
        request = session.get(Request, request_id)
        assert request is not None
        request.next_attempt_at = when
        request.last_error = f"{type(exc).__name__}: {exc}"[:1000]
        platform = request.platform
    log_transition(
        request_id,
        platform,
        RequestState.POSTING,
        previous=RequestState.POSTING,
        reason=f"posting deferred until {when.isoformat(timespec='seconds')}",
        error=f"{type(exc).__name__}: {exc}",
        level=logging.WARNING,
    )


def _hold(db: Database, request_id: int, why: str) -> None:
    """Give the attempt back and wait: the reply stays in `posting` until the switch lifts
    (lifting it makes the request due at once; until then it is looked at again each
    `HOLD_RECHECK`)."""
    with db.transaction() as session:
        request = session.get(Request, request_id)
        assert request is not None
        request.post_attempts = max(0, request.post_attempts - 1)
        request.next_attempt_at = utcnow() + HOLD_RECHECK
        request.last_error = f"{overrides.HELD}{why}"[:1000]
    log.warning("request %s: posting held: %s", request_id, why)


def _set_aside(db: Database, request_id: int, error: str) -> None:
    with db.transaction() as session:
        request = session.get(Request, request_id)
        if request is not None and request.state == RequestState.POSTING.value:
            request.next_attempt_at = utcnow() + LEASE
            request.last_error = error[:1000]


def _fail(db: Database, request_id: int, reason: str) -> None:
    with db.transaction() as session:
        request = session.get(Request, request_id)
        assert request is not None
        request.reason = reason[:1000]
        request.last_error = reason[:1000]
        request.next_attempt_at = None
        lifecycle.transition(
            session,
            request,
            RequestState.FAILED,
            reason,
            _POSTER,
            lifecycle.Outcome(error=reason),
        )
