"""Moderator actions on one request, shared by the item page and the queue's bulk form.

Each goes through `bot.moderation.actions` (which records who did what, enforces the escalation and
claim rules, and refuses an item that is not awaiting review with `review.ReviewError`); approving
also posts when this process has the request's adapter enabled (`bot.web.dispatch`) and the
kill switch allows it. The routes turn the outcomes into flashes.

Bulk actions never touch an escalated item (those are decided one by one, on their page, by a
senior moderator or an admin) and run only once confirmed with the number of items they act on
(`BulkPlan`): the confirmation is checked here, on the server, not only in the browser.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.config import Settings
from bot.moderation import actions as review
from bot.moderation.actions import Reviewer
from bot.web import dispatch
from pipeline.records import GuardReport
from storage import review_queue
from storage.db import Database
from storage.models import Request as RequestRow
from storage.models import RequestState

BULK_ACTIONS = ("approve", "reject")


def normalise_text(raw: str) -> str:
    # Browsers send textarea line breaks as CRLF; the platforms count LF.
    return raw.replace("\r\n", "\n").replace("\r", "\n").strip()


def platform_of(db: Database, request_id: int) -> str:
    """The request's platform, "" when there is no such request."""
    with db.session() as session:
        row = session.get(RequestRow, request_id)
        return row.platform if row else ""


def approve(cfg: Settings, db: Database, request_id: int, who: Reviewer) -> dispatch.PostOutcome:
    """Approve the draft (the guard checks it once more), then post it here or leave it for
    the running bot."""
    review.approve(db, request_id, who, guard_cfg=cfg.guard)
    return dispatch.post_approved(cfg, db, request_id, platform_of(db, request_id))


def reject(db: Database, request_id: int, who: Reviewer, reason: str, note: str) -> None:
    review.reject(db, request_id, who, reason, note.strip())


def escalate(cfg: Settings, db: Database, request_id: int, who: Reviewer, note: str) -> None:
    review.escalate(db, request_id, who, note.strip(), ttl_h=cfg.runtime.escalation_ttl_h)


def edit(
    cfg: Settings, db: Database, request_id: int, text: str, who: Reviewer
) -> GuardReport | None:
    """Replace the draft with `text` (already normalised) after the guard passes it; None when
    the text is the current draft, so nothing was checked or logged. An invalid report means
    nothing changed."""
    with db.session() as session:
        row = session.get(RequestRow, request_id)
        current = row.reply_text if row else None
    if text == (current or ""):
        return None
    return review.edit(db, request_id, text, who, cfg.guard)


@dataclass
class BulkPlan:
    """What a bulk action would act on: `ids` (awaiting review, not escalated) and the
    selected items it leaves out, with why."""

    action: str
    ids: list[int] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)

    @property
    def verb(self) -> str:
        return "Approve" if self.action == "approve" else "Reject"

    def question(self) -> str:
        count = len(self.ids)
        return f"{self.verb} {count} item{'' if count == 1 else 's'}?"


def plan_bulk(db: Database, action: str, ids: list[int]) -> BulkPlan:
    plan = BulkPlan(action)
    wanted = sorted(set(ids))
    if not wanted:
        return plan
    with db.session() as session:
        rows = review_queue.requests_by_id(session, wanted)
    for request_id in wanted:
        row = rows.get(request_id)
        if row is None:
            plan.excluded.append(f"#{request_id}: no such request")
        elif row.state != RequestState.AWAITING_REVIEW.value:
            plan.excluded.append(f"#{request_id}: {row.state}, not awaiting review")
        elif row.escalated_by:
            plan.excluded.append(
                f"#{request_id}: escalated, decided on its own page by a senior moderator"
            )
        else:
            plan.ids.append(request_id)
    return plan


@dataclass
class BulkResult:
    action: str
    done: list[int] = field(default_factory=list)
    posted: int = 0
    refused: list[str] = field(default_factory=list)

    def summary(self) -> str:
        verb = "approved" if self.action == "approve" else "rejected"
        message = f"{verb} {len(self.done)} item(s)"
        if self.action == "approve":
            left = len(self.done) - self.posted
            message += f", {self.posted} posted now, {left} left for the bot to post"
        return message


def bulk(
    cfg: Settings,
    db: Database,
    plan: BulkPlan,
    who: Reviewer,
    *,
    reason: str = "",
    note: str = "",
) -> BulkResult:
    """The planned action on each planned item in turn; a refused item does not stop the
    others. An item escalated since the plan was made is refused here as well."""
    result = BulkResult(plan.action)
    result.refused.extend(plan.excluded)
    for request_id in plan.ids:
        try:
            with db.session() as session:
                row = session.get(RequestRow, request_id)
                if row is not None and row.escalated_by:
                    raise review.ReviewError(f"#{request_id} was escalated: not in bulk actions")
            if plan.action == "approve":
                if approve(cfg, db, request_id, who).posted:
                    result.posted += 1
            else:
                reject(db, request_id, who, reason, note)
            result.done.append(request_id)
        except review.ReviewError as exc:
            result.refused.append(str(exc))
    return result
