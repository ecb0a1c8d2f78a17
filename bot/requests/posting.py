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
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

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
from bot import overrides
from bot.config import RuntimeConfig
from bot.logs import log_transition
from bot.requests import lifecycle
from pipeline.records import utcnow
from pipeline.reply import guard
from storage import requests
from storage.db import Database, DatabaseBusy, Session, is_lock_error, retry_when_locked
from storage.models import RequestState
from storage.repositories import latest_decision_row

log = logging.getLogger(__name__)
_POSTER = lifecycle.Actor(lifecycle.ActorKind.POSTER)

LEASE = timedelta(minutes=5)  # how long one attempt holds a request before others may retry
HOLD_RECHECK = timedelta(minutes=1)  # a reply the kill switch holds is looked at again after


def due_posts(db: Database) -> list[int]:
    with db.session() as session:
        return requests.due_posts(session, utcnow())


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
        request = requests.get(session, request_id)
        return request.platform if request else ""


@dataclass(frozen=True)
class Attempt:
    """A posting attempt claimed and committed: what to post where, its number, whether to
    ask the platform first (a later attempt, or a summons older than our records), and the
    URLs the guard allowed when the caller has the decision in hand (None: read it)."""

    request_id: int
    summons: Summons
    text: str
    number: int
    look_first: bool
    allowed: list[str] | None = None
    # The kill switch (`overrides.posting_hold`) as the claim's transaction read it, the last
    # step before the platform call: why this post must wait, or None.
    held: str | None = None


def post_one(db: Database, adapter: Adapter, request_id: int, cfg: RuntimeConfig) -> bool:
    """Try to post one request in `posting`. True once its reply is known to be on the
    platform."""
    attempt = _claim(db, request_id)
    if attempt is None:
        return False
    return post_claimed(db, adapter, attempt, cfg)


def first_attempt_values(posted_before: int) -> dict[str, object]:
    """The request's columns that claim its next posting attempt (number `posted_before` + 1),
    for the caller's own guarded UPDATE of it: the worker's move to `posting`, which records
    the reply text (the intent), so intent and claim commit together, before the platform
    call. Guarded by the caller's lease and the move to `posting` in the same statement, no
    other poster can have claimed it. The holder is named as `_claim` names it."""
    return {
        "post_attempts": posted_before + 1,
        "next_attempt_at": utcnow() + LEASE,
        "lease_owner": lifecycle.process_name(),
    }


def claimed_attempt(
    session: Session,
    request_id: int,
    summons: Summons,
    text: str,
    number: int,
    allowed: list[str],
) -> Attempt:
    """The attempt `first_attempt_values` claimed, read in the transaction that claims it:
    whether to ask the platform first, and the kill switch."""
    if not text:
        raise ValueError(f"request #{request_id} is posting without a reply text")
    look_first = number > 1 or _older_than_our_records(session, summons)
    held = overrides.posting_hold_in(session, summons.platform)
    return Attempt(request_id, summons, text, number, look_first, allowed, held)


def post_claimed(db: Database, adapter: Adapter, attempt: Attempt, cfg: RuntimeConfig) -> bool:
    """Post a claimed attempt (`post_one`, or a worker that claimed it with its decision)."""
    request_id, summons, text = attempt.request_id, attempt.summons, attempt.text
    # The kill switch, read from the database as the attempt was claimed: a pause or a dry-run
    # set a moment ago in the review app (or `factnote review pause`) stops this post in the
    # running bot.
    if attempt.held is not None:
        _hold(db, request_id, attempt.held)
        return False
    if attempt.allowed is None:
        links = _approved_links(db, request_id, text)
    else:
        links = guard.approved_urls(guard.find_urls(text), attempt.allowed)
    try:
        if attempt.look_first:
            receipt = adapter.find_reply(summons)
            if receipt is not None:
                _mark_posted(db, attempt, receipt, "reconciled: reply found on the platform")
                return True
        receipt = adapter.post_reply(summons, text, links)
    except DuplicateReply as exc:
        # A duplicate refusal is no proof of posting (the same text may have gone to someone
        # else): posted only with a receipt, and the same text is never sent again.
        found = _safe_find(adapter, summons)
        if found is None:
            _fail(db, request_id, f"duplicate text, reply not found: {exc}")
            return False
        _mark_posted(db, attempt, found, f"platform reports a duplicate: {exc}")
        return True
    except AccessDenied as exc:
        # The account or app may not post at all: alert, keep the request, burn no attempt.
        log.error("request %s: %s cannot post: %s", request_id, adapter.name, exc)
        _retry_later(db, request_id, exc, utcnow() + timedelta(minutes=15))
        with db.transaction() as session:
            request = requests.get(session, request_id)
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
        number = attempt.number
        if not exc.retryable or number >= cfg.max_attempts:
            _fail(db, request_id, f"posting failed after {number} attempt(s): {exc}")
        else:
            _retry_later(db, request_id, exc, lifecycle.retry_at(number, cfg.retry_backoff_s))
        return False
    # The reply is out: recording it must not be lost to another process's lock.
    retry_when_locked(
        lambda: _mark_posted(db, attempt, receipt, ""),
        what=f"request {request_id}: recording the posted reply",
        attempts=cfg.db_lock_attempts,
        backoff_s=cfg.db_lock_backoff_s,
    )
    return True


# How far a platform's clock may run ahead of ours.
CLOCK_SKEW = timedelta(minutes=10)


def _older_than_our_records(session: Session, summons: Summons) -> bool:
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
    horizon = requests.horizon(session, summons.platform)
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


def _claim(db: Database, request_id: int) -> Attempt | None:
    with db.transaction() as session:
        request = requests.get(session, request_id)
        if request is None or request.state != RequestState.POSTING.value:
            return None
        seen = request.post_attempts
        # Another poster's claim (its lease) still runs: leave the request to it. Without
        # this, a worker posting right after its decision and the scheduler's `post_due`
        # could both claim, one after the other, and both post (issue 12 crash test). The
        # holder is named so that a restart on this host can tell a claim its dead
        # predecessor left (made due again at once) from a live process's.
        if not requests.claim_post(
            session, request_id, seen, utcnow(), LEASE, lifecycle.process_name()
        ):
            return None
        if not request.reply_text:
            raise ValueError(f"request #{request_id} is posting without a reply text")
        summons = Summons.model_validate(request.summons)
        number = seen + 1
        look_first = number > 1 or _older_than_our_records(session, summons)
        held = overrides.posting_hold_in(session, summons.platform)
        return Attempt(request_id, summons, request.reply_text, number, look_first, held=held)


def _safe_find(adapter: Adapter, summons: Summons) -> ReplyReceipt | None:
    try:
        return adapter.find_reply(summons)
    except PlatformError:
        return None


def _mark_posted(db: Database, attempt: Attempt, receipt: ReplyReceipt | None, note: str) -> None:
    """The receipt, committed after the platform call: one guarded update and its event (the
    request is not read again; a request no longer in `posting` is refused, as before)."""
    values: dict[str, Any] = {
        "reply_id": receipt.reply_id if receipt else None,
        "posted_at": receipt.posted_at if receipt else utcnow(),
        "next_attempt_at": None,
    }
    if note:
        values["reason"] = note
    why = note or (f"reply {receipt.reply_id}" if receipt and receipt.reply_id else "")
    posting = RequestState.POSTING
    held = lifecycle.Held(attempt.request_id, posting.value, attempt.summons.platform)
    with db.transaction() as session:
        moved = lifecycle.transition_where(
            session, [held], [posting], RequestState.POSTED, why, _POSTER, **values
        )
        if not moved:
            raise lifecycle.TransitionRefused(
                f"request #{attempt.request_id}: posted, but no longer in posting"
            )


def _retry_later(db: Database, request_id: int, exc: PlatformError, when: datetime) -> None:
    with db.transaction() as session:
        request = requests.get(session, request_id)
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
        request = requests.get(session, request_id)
        assert request is not None
        request.post_attempts = max(0, request.post_attempts - 1)
        request.next_attempt_at = utcnow() + HOLD_RECHECK
        request.last_error = f"{overrides.HELD}{why}"[:1000]
    log.warning("request %s: posting held: %s", request_id, why)


def _set_aside(db: Database, request_id: int, error: str) -> None:
    with db.transaction() as session:
        request = requests.get(session, request_id)
        if request is not None and request.state == RequestState.POSTING.value:
            request.next_attempt_at = utcnow() + LEASE
            request.last_error = error[:1000]


def _fail(db: Database, request_id: int, reason: str) -> None:
    with db.transaction() as session:
        request = requests.get(session, request_id)
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
