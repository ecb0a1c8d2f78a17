"""Moderator actions on one request, shared by the item page and the queue's bulk form.

Each goes through `bot.review` (which records who did what and refuses an item that is not
awaiting review with `review.ReviewError`); approving also posts when this process has the
request's adapter enabled (`bot.web.dispatch`). The routes turn the outcomes into flashes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot import review
from bot.config import Settings
from bot.web import dispatch
from pipeline.records import GuardReport
from storage.db import Database
from storage.models import Request as RequestRow

BULK_ACTIONS = ("approve", "reject")


def normalise_text(raw: str) -> str:
    # Browsers send textarea line breaks as CRLF; the platforms count LF.
    return raw.replace("\r\n", "\n").replace("\r", "\n").strip()


def platform_of(db: Database, request_id: int) -> str:
    """The request's platform, "" when there is no such request."""
    with db.session() as session:
        row = session.get(RequestRow, request_id)
        return row.platform if row else ""


def approve(cfg: Settings, db: Database, request_id: int, actor: str) -> dispatch.PostOutcome:
    """Approve the draft, then post it here or leave it for the running bot."""
    review.approve(db, request_id, actor)
    return dispatch.post_approved(cfg, db, request_id, platform_of(db, request_id))


def reject(db: Database, request_id: int, actor: str, reason: str, note: str) -> None:
    review.reject(db, request_id, actor, reason, note.strip())


def escalate(db: Database, request_id: int, actor: str, note: str) -> None:
    review.escalate(db, request_id, actor, note.strip())


def edit(cfg: Settings, db: Database, request_id: int, text: str, actor: str) -> GuardReport | None:
    """Replace the draft with `text` (already normalised) after the guard passes it; None when
    the text is the current draft, so nothing was checked or logged. An invalid report means
    nothing changed."""
    with db.session() as session:
        row = session.get(RequestRow, request_id)
        current = row.reply_text if row else None
    if text == (current or ""):
        return None
    return review.edit(db, request_id, text, actor, cfg.guard)


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
    action: str,
    ids: list[int],
    actor: str,
    *,
    reason: str = "",
    note: str = "",
) -> BulkResult:
    """`action` (one of BULK_ACTIONS) on each of `ids` in turn; a refused item does not stop
    the others."""
    result = BulkResult(action)
    for request_id in sorted(set(ids)):
        try:
            if action == "approve":
                if approve(cfg, db, request_id, actor).posted:
                    result.posted += 1
            else:
                reject(db, request_id, actor, reason, note)
            result.done.append(request_id)
        except review.ReviewError as exc:
            result.refused.append(str(exc))
    return result
