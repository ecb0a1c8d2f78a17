"""Moderator actions on drafts waiting for review, shared by the CLI and the web app.

Every action is recorded (who, when, what changed) in `review_actions`. An edited text goes
through the guard again and cannot introduce a URL that is not evidence. Approving moves the
request to `posting`; the caller posts it through the adapter.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from bot.convert import reply_rules
from pipeline import guard
from pipeline.config import GuardConfig
from pipeline.records import GuardReport, utcnow
from storage.db import Database
from storage.models import Request, RequestState, ReviewAction
from storage.repositories import latest_decision

REJECT_REASONS = (
    "wrong verdict",
    "weak or irrelevant evidence",
    "tone or wording",
    "not worth a reply",
    "other",
)


class ReviewError(Exception):
    pass


def pending(db: Database, *, oldest_first: bool = True, limit: int = 100) -> list[Request]:
    order = Request.created_at.asc() if oldest_first else Request.created_at.desc()
    with db.session() as session:
        return list(
            session.scalars(
                select(Request)
                .where(Request.state == RequestState.AWAITING_REVIEW.value)
                .order_by(order)
                .limit(limit)
            )
        )


def history(session: Session, request_id: int) -> list[ReviewAction]:
    return list(
        session.scalars(
            select(ReviewAction)
            .where(ReviewAction.request_id == request_id)
            .order_by(ReviewAction.id)
        )
    )


def _awaiting(session: Session, request_id: int) -> Request:
    request = session.get(Request, request_id)
    if request is None:
        raise ReviewError(f"no request #{request_id}")
    if request.state != RequestState.AWAITING_REVIEW.value:
        raise ReviewError(f"request #{request_id} is {request.state}, not awaiting review")
    return request


def _log(session: Session, request_id: int, actor: str, action: str, **detail: Any) -> None:
    session.add(ReviewAction(request_id=request_id, actor=actor, action=action, detail=detail))


def check_edit(session: Session, request: Request, text: str, cfg: GuardConfig) -> GuardReport:
    """The guard on an edited draft: the platform's length rules, and URLs only from the
    decision's evidence."""
    decision = latest_decision(session, request.id)
    evidence_urls = [e.url for e in decision.evidence] if decision else []
    platform = reply_rules(request.platform)
    target = (request.target or {}).get("text")
    return guard.check_text(text, platform, evidence_urls=evidence_urls, cfg=cfg, post_text=target)


def edit(db: Database, request_id: int, text: str, actor: str, cfg: GuardConfig) -> GuardReport:
    """Replace the draft if the guard accepts it; the refusal is returned, nothing changes."""
    with db.transaction() as session:
        request = _awaiting(session, request_id)
        report = check_edit(session, request, text, cfg)
        if report.valid:
            _log(session, request_id, actor, "edit", before=request.reply_text, after=text)
            request.reply_text = text
        return report


def approve(db: Database, request_id: int, actor: str) -> None:
    with db.transaction() as session:
        request = _awaiting(session, request_id)
        if not request.reply_text:
            raise ReviewError(f"request #{request_id} has no draft to approve")
        _log(session, request_id, actor, "approve", text=request.reply_text)
        request.state = RequestState.POSTING.value
        request.next_attempt_at = None


def reject(db: Database, request_id: int, actor: str, reason: str, note: str = "") -> None:
    if reason not in REJECT_REASONS:
        raise ReviewError(f"reason must be one of: {', '.join(REJECT_REASONS)}")
    with db.transaction() as session:
        request = _awaiting(session, request_id)
        _log(session, request_id, actor, "reject", reason=reason, note=note)
        request.state = RequestState.REJECTED.value
        request.reason = f"rejected by {actor}: {reason}" + (f" ({note})" if note else "")


def escalate(db: Database, request_id: int, actor: str, note: str = "") -> None:
    """Flag for a senior moderator; the item stays in the queue and its deadline is lifted."""
    with db.transaction() as session:
        request = _awaiting(session, request_id)
        _log(session, request_id, actor, "escalate", note=note)
        request.review_deadline = None
        request.reason = f"escalated by {actor}" + (f": {note}" if note else "")


def expire_overdue(db: Database, now: datetime | None = None) -> Sequence[int]:
    """Review items past their deadline become abstentions (the runtime's expiry job)."""
    moment = now or utcnow()
    with db.transaction() as session:
        ids = list(
            session.scalars(
                select(Request.id).where(
                    Request.state == RequestState.AWAITING_REVIEW.value,
                    Request.review_deadline.is_not(None),
                    Request.review_deadline < moment,
                )
            )
        )
        if ids:
            session.execute(
                update(Request)
                .where(Request.id.in_(ids), Request.state == RequestState.AWAITING_REVIEW.value)
                .values(
                    state=RequestState.EXPIRED.value,
                    reason="review deadline passed: abstained",
                )
                .execution_options(synchronize_session=False)
            )
            for request_id in ids:
                _log(session, request_id, "system", "expire")
        return ids
