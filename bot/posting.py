"""Posting a decided reply, exactly once.

The reply text is committed (state `posting`) before the platform call; the platform's reply id
after it. Each attempt is claimed in its own commit (post_attempts + 1, with a lease), so two
workers never post the same request, and an attempt that finds earlier attempts first asks the
platform whether our reply already landed (a crash may have come between the call and the
commit). Rate limits are scheduled around, never slept through.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from sqlalchemy import select, update

from adapters.base import (
    Adapter,
    DuplicateReply,
    PlatformError,
    RateLimited,
    ReplyForbidden,
    ReplyReceipt,
    Summons,
)
from bot.config import RuntimeConfig
from pipeline.records import utcnow
from storage.db import Database
from storage.models import Request, RequestState

log = logging.getLogger(__name__)

LEASE = timedelta(minutes=5)  # how long one attempt holds a request before others may retry


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
        if adapter is not None and post_one(db, adapter, request_id, cfg):
            posted += 1
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
    try:
        if attempt > 1:
            receipt = adapter.find_reply(summons)
            if receipt is not None:
                _mark_posted(db, request_id, receipt, "reconciled: reply found on the platform")
                return True
        receipt = adapter.post_reply(summons, text)
    except DuplicateReply as exc:
        found = _safe_find(adapter, summons)
        _mark_posted(db, request_id, found, f"platform reports a duplicate: {exc}")
        return True
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
            delay = cfg.retry_backoff_s * 2 ** (attempt - 1)
            _retry_later(db, request_id, exc, utcnow() + timedelta(seconds=delay))
        return False
    _mark_posted(db, request_id, receipt, "")
    return True


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
            )
            .values(post_attempts=seen + 1, next_attempt_at=utcnow() + LEASE)
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
        request.state = RequestState.POSTED.value
        request.reply_id = receipt.reply_id if receipt else None
        request.posted_at = receipt.posted_at if receipt else utcnow()
        request.next_attempt_at = None
        if note:
            request.reason = note


def _retry_later(db: Database, request_id: int, exc: PlatformError, when: datetime) -> None:
    with db.transaction() as session:
        request = session.get(Request, request_id)
        assert request is not None
        request.next_attempt_at = when
        request.last_error = f"{type(exc).__name__}: {exc}"[:1000]
    log.warning("request %s: posting deferred: %s", request_id, exc)


def _fail(db: Database, request_id: int, reason: str) -> None:
    with db.transaction() as session:
        request = session.get(Request, request_id)
        assert request is not None
        request.state = RequestState.FAILED.value
        request.reason = reason[:1000]
        request.last_error = reason[:1000]
        request.next_attempt_at = None
