"""Counting requests by outcome, for `factnote run --once`, `status` and the demo.

Requests from `factnote check` (platform `cli`, see `storage.repositories.create_cli_request`)
are kept apart everywhere the bot's traffic is counted: nobody summoned the bot for them and
nothing of theirs is posted, so counting them would make the bot look busier than it is."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import func, select

from pipeline.records import utcnow
from storage.db import Database
from storage.models import Cursor, RateBudgetRow, Request, RequestEvent, RequestState

# How a held request's last_error starts (`bot.overrides.HELD`; spelt here, as the overrides
# module imports the settings and this one is read by every `status`).
HELD = "held: "

# The platform of the request rows `factnote check` writes (storage.repositories).
CLI_PLATFORM = "cli"


@dataclass
class Overview:
    by_state: dict[str, int] = field(default_factory=dict)
    needs_llm: list[tuple[int, str]] = field(default_factory=list)  # (request id, summons id)
    recent_errors: list[tuple[int, str]] = field(default_factory=list)
    # Replies the kill switch holds (a deliberate pause, not an error), with why.
    held: list[tuple[int, str]] = field(default_factory=list)
    polls: list[Cursor] = field(default_factory=list)
    budgets: list[RateBudgetRow] = field(default_factory=list)
    cli_checks: int = 0  # `factnote check` runs, not in by_state

    @property
    def total(self) -> int:
        return sum(self.by_state.values())


def poll_failing(cursor: Cursor) -> bool:
    """Whether the adapter's last poll failed (its error is not older than the poll)."""
    return (
        cursor.last_error_at is not None
        and cursor.last_poll_at is not None
        and cursor.last_error_at >= cursor.last_poll_at
    )


def posted_since(db: Database, since: datetime) -> int:
    """Replies that reached a platform since `since`, whoever posted them: a worker posts right
    after its decision and the maintenance step posts what is due, so neither's own count is
    the cycle's (counted from the request history, where every `posted` transition is a row)."""
    with db.session() as session:
        count = session.scalar(
            select(func.count(RequestEvent.id)).where(
                RequestEvent.to_state == RequestState.POSTED.value, RequestEvent.at >= since
            )
        )
    return int(count or 0)


def overview(db: Database) -> Overview:
    hour_ago = utcnow() - timedelta(hours=1)
    with db.session() as session:
        bot = Request.platform != CLI_PLATFORM
        rows = session.execute(
            select(Request.state, func.count(Request.id)).where(bot).group_by(Request.state)
        ).all()
        needs = session.execute(
            select(Request.id, Request.summons_id)
            .where(Request.state == "needs_llm", bot)
            .order_by(Request.id)
        ).all()
        checks = session.scalar(
            select(func.count(Request.id)).where(Request.platform == CLI_PLATFORM)
        )
        errors = session.execute(
            select(Request.id, Request.last_error)
            .where(
                Request.last_error.is_not(None),
                Request.last_error.not_like(f"{HELD}%"),
                Request.updated_at >= hour_ago,
            )
            .order_by(Request.id.desc())
            .limit(20)
        ).all()
        held = session.execute(
            select(Request.id, Request.last_error)
            .where(
                Request.state == RequestState.POSTING.value,
                Request.last_error.like(f"{HELD}%"),
            )
            .order_by(Request.id)
            .limit(20)
        ).all()
        polls = list(session.scalars(select(Cursor).order_by(Cursor.adapter)))
        budgets = list(session.scalars(select(RateBudgetRow).order_by(RateBudgetRow.adapter)))
    return Overview(
        by_state={state: count for state, count in rows},
        needs_llm=[(i, s) for i, s in needs],
        recent_errors=[(i, e or "") for i, e in errors],
        held=[(i, (e or "").removeprefix(HELD)) for i, e in held],
        polls=polls,
        budgets=budgets,
        cli_checks=int(checks or 0),
    )
