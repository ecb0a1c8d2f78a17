"""The review app's decisions log in SQL: every request, newest received first, a page at a
time with the true count of what matches. Only the columns the log shows are read (never a
trace), and a request's latest decision is joined only when a filter or the page needs it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Select, String, Text, cast, or_, select
from sqlalchemy.orm import Session

from pipeline.records import Verdict
from storage.models import DecisionRow, Request, RequestState
from storage.review_queue import (
    contains,
    count,
    day,
    known,
    latest_decision_id,
)

PAGE_SIZE = 50
_VERDICT_VALUES = frozenset(v.value for v in Verdict)
_STATE_VALUES = frozenset(s.value for s in RequestState)


def utc_day(value: date) -> datetime:
    """Midnight UTC of `value`: dates in filters and reports are UTC days."""
    return datetime.combine(value, time.min, tzinfo=UTC)


@dataclass
class LogFilter:
    q: str = ""
    platform: str = ""
    verdict: str = ""
    state: str = ""
    since: date | None = None
    until: date | None = None
    page: int = 1

    @classmethod
    def from_query(cls, args: Mapping[str, str], page: int = 1) -> LogFilter:
        """The filter from the log's query string (`page` comes validated as a number)."""
        return cls(
            q=args.get("q", "").strip(),
            platform=args.get("platform", "").strip(),
            verdict=known(args.get("verdict", ""), _VERDICT_VALUES),
            state=known(args.get("state", ""), _STATE_VALUES),
            since=day(args.get("since", "")),
            until=day(args.get("until", "")),
            page=max(1, page),
        )

    def as_query(self) -> dict[str, str]:
        fields = {
            "q": self.q,
            "platform": self.platform,
            "verdict": self.verdict,
            "state": self.state,
            "since": self.since.isoformat() if self.since else "",
            "until": self.until.isoformat() if self.until else "",
        }
        return {k: v for k, v in fields.items() if v}


@dataclass
class LogRow:
    id: int
    created_at: datetime
    platform: str
    requester: str
    state: str
    mode: str
    verdict: str | None
    confidence: float | None
    target_text: str
    reply_text: str
    reason: str


def _matching(flt: LogFilter) -> Select[Any]:
    stmt = select(Request.id)
    if flt.platform:
        stmt = stmt.where(Request.platform == flt.platform)
    if flt.state:
        stmt = stmt.where(Request.state == flt.state)
    if flt.since:
        stmt = stmt.where(Request.created_at >= utc_day(flt.since))
    if flt.until:
        stmt = stmt.where(Request.created_at < utc_day(flt.until) + timedelta(days=1))
    if flt.verdict:
        stmt = stmt.where(Request.latest_verdict == flt.verdict)
    if flt.q:
        stmt = stmt.outerjoin(DecisionRow, DecisionRow.id == latest_decision_id())
        stmt = stmt.where(_text_match(flt.q))
    # Newest received first, in the order of the `created_at` index: a deep page skips index
    # entries, not request rows.
    return stmt.order_by(Request.created_at.desc(), Request.id.desc())


def decision_log(session: Session, flt: LogFilter) -> tuple[list[LogRow], int]:
    """One page of every request (newest first) matching the filter, and the total count."""
    stmt = _matching(flt)
    total = count(session, stmt)
    ids = list(session.scalars(stmt.offset((max(1, flt.page) - 1) * PAGE_SIZE).limit(PAGE_SIZE)))
    if not ids:
        return [], total
    found = session.execute(
        select(
            Request.id,
            Request.created_at,
            Request.platform,
            Request.requester,
            Request.state,
            Request.mode,
            Request.target,
            Request.reply_text,
            Request.reason,
            DecisionRow.verdict,
            DecisionRow.confidence,
        )
        .outerjoin(DecisionRow, DecisionRow.id == latest_decision_id())
        .where(Request.id.in_(ids))
    ).all()
    rows = sorted(found, key=lambda r: ids.index(r.id))
    return [
        LogRow(
            id=r.id,
            created_at=r.created_at,
            platform=r.platform,
            requester=r.requester,
            state=r.state,
            mode=r.mode,
            verdict=r.verdict,
            confidence=r.confidence,
            target_text=str((r.target or {}).get("text", "")),
            reply_text=r.reply_text or "",
            reason=r.reason,
        )
        for r in rows
    ], total


def _text_match(q: str) -> ColumnElement[bool]:
    # Post text lives in JSON columns, stored with non-ASCII characters escaped (\u00e9):
    # search for the text as typed and as JSON would spell it.
    needles = {q, json.dumps(q)[1:-1]}
    columns: list[Any] = [
        Request.reply_text,
        Request.requester,
        Request.reason,
        cast(Request.target, Text),
        cast(Request.summons, Text),
        cast(DecisionRow.reply, String),
    ]
    return or_(*(contains(column, needle) for column in columns for needle in needles))
