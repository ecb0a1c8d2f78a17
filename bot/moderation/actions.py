"""Moderator actions on drafts waiting for review, shared by the CLI and the web app.

Every action is recorded (who, when, what changed) in `review_actions`. An edited text goes
through the guard again and cannot introduce a URL that is not evidence; approving checks the
text about to be posted once more when given the guard's settings. Approving moves the request
to `posting`; the caller posts it through the adapter.

Team rules, enforced here so the CLI and the web app cannot differ:

- An escalated item is decided (approved or rejected) only by a senior moderator or an admin
  (`Reviewer.senior`); anyone else is refused, and the refusal is recorded in the item's history.
- An item claimed by (or assigned to) someone is worked on by that person only; anyone may take
  it over (`claim(..., take_over=True)`), which is recorded too. Deciding an item ends its claim.

A plain string actor is a reviewer who is not senior (the runtime's own tests and `system`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NoReturn

from bot.requests import lifecycle
from bot.requests.to_pipeline import reply_platform
from pipeline.config import GuardConfig
from pipeline.records import GuardReport, utcnow
from pipeline.reply import guard
from storage import requests, users
from storage.db import Database, Session
from storage.models import Request, RequestState, ReviewAction
from storage.repositories import latest_decision

REJECT_REASONS = (
    "wrong verdict",
    "weak or irrelevant evidence",
    "tone or wording",
    "not worth a reply",
    "other",
)
# Actions only a senior moderator (or an admin) may take on an escalated item.
# An escalated item's text is the senior's to change as well as to decide: a moderator's edit
# after escalation would have the senior approve words they were not asked about.
SENIOR_ACTIONS = frozenset({"approve", "reject", "edit"})
# Hours an escalated item waits for a senior before it expires (`[runtime] escalation_ttl_h`).
ESCALATION_TTL_H = 48.0


class ReviewError(Exception):
    pass


class NotAllowed(ReviewError):
    """The action is refused to this reviewer (escalation, someone else's claim)."""


@dataclass(frozen=True)
class Reviewer:
    """Who acts: the account's name, and whether it may decide escalated items."""

    name: str
    senior: bool = False


def reviewer_of(actor: str | Reviewer) -> Reviewer:
    return actor if isinstance(actor, Reviewer) else Reviewer(actor)


def history(session: Session, request_id: int) -> list[ReviewAction]:
    return requests.review_actions(session, request_id)


def _awaiting(session: Session, request_id: int) -> Request:
    request = requests.get(session, request_id)
    if request is None:
        raise ReviewError(f"no request #{request_id}")
    if request.state != RequestState.AWAITING_REVIEW.value:
        raise ReviewError(f"request #{request_id} is {request.state}, not awaiting review")
    return request


def _log(session: Session, request_id: int, actor: str, action: str, **detail: Any) -> None:
    session.add(ReviewAction(request_id=request_id, actor=actor, action=action, detail=detail))


def escalation_refusal(request: Request, who: Reviewer, action: str) -> str | None:
    """Why `who` may not `action` this item because it is escalated, or None."""
    if request.escalated_by and action in SENIOR_ACTIONS and not who.senior:
        return (
            f"request #{request.id} is escalated (by {request.escalated_by}): only a senior "
            f"moderator or an admin may {action} it"
        )
    return None


def claim_refusal(request: Request, who: Reviewer) -> str | None:
    """Why `who` may not work on this item because someone else has it, or None."""
    if request.claimed_by and request.claimed_by != who.name:
        return f"request #{request.id} is claimed by {request.claimed_by}: take it over first"
    return None


def _refusal(request: Request, who: Reviewer, action: str) -> tuple[str, bool] | None:
    """(why, whether the refusal goes into the item's history) or None when allowed."""
    why = escalation_refusal(request, who, action)
    if why is not None:
        return why, True
    why = claim_refusal(request, who)
    return (why, False) if why is not None else None


def _refuse(
    db: Database, request_id: int, who: Reviewer, action: str, refusal: tuple[str, bool]
) -> NoReturn:
    why, audited = refusal
    if audited:
        with db.transaction() as session:
            _log(session, request_id, who.name, "refused", tried=action, why=why)
    raise NotAllowed(why)


def ensure_allowed(db: Database, request_id: int, actor: str | Reviewer, action: str) -> None:
    """Raise (and record an escalation refusal) when `actor` may not `action` the item now;
    for a route that must know before it changes anything (edit, then approve)."""
    who = reviewer_of(actor)
    with db.session() as session:
        request = _awaiting(session, request_id)
        refusal = _refusal(request, who, action)
    if refusal is not None:
        _refuse(db, request_id, who, action, refusal)


def check_edit(session: Session, request: Request, text: str, cfg: GuardConfig) -> GuardReport:
    """The guard on an edited draft: the platform's length rules, and URLs only from the
    decision's evidence."""
    decision = latest_decision(session, request.id)
    evidence_urls = [e.url for e in decision.evidence] if decision else []
    platform = reply_platform(request.platform)
    target = (request.target or {}).get("text")
    return guard.check_text(text, platform, evidence_urls=evidence_urls, cfg=cfg, post_text=target)


def check_text(db: Database, request_id: int, text: str, cfg: GuardConfig) -> GuardReport:
    """`check_edit` on any text for a request, changing nothing (the live check as one types)."""
    with db.session() as session:
        request = requests.get(session, request_id)
        if request is None:
            raise ReviewError(f"no request #{request_id}")
        return check_edit(session, request, text, cfg)


def edit(
    db: Database, request_id: int, text: str, actor: str | Reviewer, cfg: GuardConfig
) -> GuardReport:
    """Replace the draft if the guard accepts it; the refusal is returned, nothing changes."""
    who = reviewer_of(actor)
    with db.transaction() as session:
        request = _awaiting(session, request_id)
        refusal = _refusal(request, who, "edit")
        if refusal is None:
            report = check_edit(session, request, text, cfg)
            if report.valid:
                _log(session, request_id, who.name, "edit", before=request.reply_text, after=text)
                request.reply_text = text
            return report
    _refuse(db, request_id, who, "edit", refusal)


def approve(
    db: Database, request_id: int, actor: str | Reviewer, *, guard_cfg: GuardConfig | None = None
) -> None:
    """Approve the draft: the request moves to `posting`. With `guard_cfg`, the text about to
    be posted is checked by the guard once more and refused when it no longer passes."""
    who = reviewer_of(actor)
    with db.transaction() as session:
        request = _awaiting(session, request_id)
        refusal = _refusal(request, who, "approve")
        if refusal is None:
            if not request.reply_text:
                raise ReviewError(f"request #{request_id} has no draft to approve")
            if guard_cfg is not None:
                report = check_edit(session, request, request.reply_text, guard_cfg)
                if not report.valid:
                    problems = "; ".join(str(p) for p in report.problems)
                    raise ReviewError(
                        f"request #{request_id}: the guard refuses the draft ({problems}); "
                        "edit it first"
                    )
            _log(session, request_id, who.name, "approve", text=request.reply_text)
            lifecycle.transition(session, request, RequestState.POSTING, "approved", _by(who))
            request.next_attempt_at = None
            request.claimed_by = None
            request.claimed_at = None
            return
    _refuse(db, request_id, who, "approve", refusal)


def reject(
    db: Database, request_id: int, actor: str | Reviewer, reason: str, note: str = ""
) -> None:
    if reason not in REJECT_REASONS:
        raise ReviewError(f"reason must be one of: {', '.join(REJECT_REASONS)}")
    who = reviewer_of(actor)
    with db.transaction() as session:
        request = _awaiting(session, request_id)
        refusal = _refusal(request, who, "reject")
        if refusal is None:
            _log(session, request_id, who.name, "reject", reason=reason, note=note)
            request.reason = f"rejected by {who.name}: {reason}" + (f" ({note})" if note else "")
            lifecycle.transition(session, request, RequestState.REJECTED, request.reason, _by(who))
            request.claimed_by = None
            request.claimed_at = None
            return
    _refuse(db, request_id, who, "reject", refusal)


def escalate(
    db: Database,
    request_id: int,
    actor: str | Reviewer,
    note: str = "",
    *,
    ttl_h: float = ESCALATION_TTL_H,
) -> None:
    """Flag for a senior moderator: the item stays in the queue with a new deadline `ttl_h`
    hours away (it expires to an abstention then, as any review item does), its claim ends,
    and from now on only a senior moderator or an admin edits, approves or rejects it."""
    who = reviewer_of(actor)
    with db.transaction() as session:
        request = _awaiting(session, request_id)
        if request.escalated_by:
            raise ReviewError(f"request #{request_id} is already escalated")
        refusal = _refusal(request, who, "escalate")
        if refusal is None:
            _log(session, request_id, who.name, "escalate", note=note)
            request.review_deadline = utcnow() + timedelta(hours=ttl_h)
            request.reason = f"escalated by {who.name}" + (f": {note}" if note else "")
            request.escalated_by = who.name
            request.escalated_at = utcnow()
            request.claimed_by = None
            request.claimed_at = None
            return
    _refuse(db, request_id, who, "escalate", refusal)


def claim(
    db: Database,
    request_id: int,
    actor: str | Reviewer,
    *,
    assignee: str | None = None,
    take_over: bool = False,
) -> str:
    """`actor` takes the item, or assigns it to `assignee` (an active account); returns who
    has it now. An item someone else has is taken only with `take_over`."""
    who = reviewer_of(actor)
    target = (assignee or who.name).strip()
    with db.transaction() as session:
        request = _awaiting(session, request_id)
        if target != who.name and not users.is_active(session, target):
            raise ReviewError(f"no active user {target!r} to assign #{request_id} to")
        previous = request.claimed_by
        if previous == target:
            return target
        if previous and previous != who.name and not take_over:
            raise NotAllowed(
                f"request #{request_id} is claimed by {previous}: take it over to work on it"
            )
        detail: dict[str, Any] = {}
        if target != who.name:
            detail["assignee"] = target
        if previous:
            detail["from"] = previous
        _log(session, request_id, who.name, "assign" if target != who.name else "claim", **detail)
        request.claimed_by = target
        request.claimed_at = utcnow()
        return target


def release(db: Database, request_id: int, actor: str | Reviewer) -> None:
    """Give the item back to the queue: its holder, or a senior moderator or admin."""
    who = reviewer_of(actor)
    with db.transaction() as session:
        request = _awaiting(session, request_id)
        holder = request.claimed_by
        if not holder:
            return
        if holder != who.name and not who.senior:
            raise NotAllowed(f"request #{request_id} is claimed by {holder}, not by you")
        detail = {"from": holder} if holder != who.name else {}
        _log(session, request_id, who.name, "release", **detail)
        request.claimed_by = None
        request.claimed_at = None


def _by(who: Reviewer) -> lifecycle.Actor:
    return lifecycle.Actor(lifecycle.ActorKind.MODERATOR, who.name)


def expire_overdue(db: Database, now: datetime | None = None) -> Sequence[int]:
    """Review items past their deadline become abstentions (the runtime's expiry job)."""
    moment = now or utcnow()
    with db.transaction() as session:
        ids = requests.overdue_reviews(session, moment)
        reason = "review deadline passed: abstained"
        ids = lifecycle.transition_where(
            session,
            ids,
            [RequestState.AWAITING_REVIEW],
            RequestState.EXPIRED,
            reason,
            lifecycle.Actor(lifecycle.ActorKind.SCHEDULER, "review-expiry"),
            reason=reason,
        )
        for request_id in ids:
            _log(session, request_id, "system", "expire")
        return ids
