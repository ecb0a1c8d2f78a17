"""Queries `/metrics` (`bot.ops.metrics`) runs at each scrape besides the running totals
(`storage.metric_totals`) and the state counts (`storage.review_queue`): one platform's
requests, posting errors per platform, and the adapters' rate budgets."""

from __future__ import annotations

from sqlalchemy import func, literal_column, select
from sqlalchemy.orm import Session

from storage.models import RateBudgetRow, Request


def requests_of(session: Session, platform: str) -> int:
    """How many requests `platform` has (for the check runs' few rows: no scan of others)."""
    found = session.scalar(
        select(func.count()).select_from(Request).where(Request.platform == platform)
    )
    return int(found or 0)


def posting_errors(session: Session) -> list[tuple[str, int]]:
    """Per platform, the requests whose posting met a platform error (an attempt made and an
    error kept)."""
    rows = session.execute(
        select(Request.platform, func.count())
        # Literal terms, as the partial index `ix_requests_post_errors` spells them.
        .where(Request.post_attempts > literal_column("0"), Request.last_error.is_not(None))
        .group_by(Request.platform)
    )
    return [(platform, int(count)) for platform, count in rows]


def rate_budgets(session: Session) -> list[RateBudgetRow]:
    """Every adapter endpoint's last known rate budget."""
    return list(session.scalars(select(RateBudgetRow)))
