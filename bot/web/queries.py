"""What the review app's pages read from the database: the queue, the decisions log and one
request with its whole trace. Read-only; the moderator actions are in `bot.review`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Select, String, Text, cast, func, or_, select
from sqlalchemy.orm import Session, selectinload

from bot import review
from bot.convert import reply_platform
from bot.lifecycle import Event
from bot.lifecycle import history as event_log
from pipeline.records import TIER_RANK, GuardReport, Passage, Platform, Tier, Verdict
from pipeline.urls import canonical_url
from storage.db import Database
from storage.models import (
    DecisionRow,
    DocumentRow,
    EvidenceRow,
    Request,
    RequestState,
    ReviewAction,
)
from storage.repositories import snapshot_for

QUEUE_LIMIT = 500
PAGE_SIZE = 50
ORDERS = ("oldest", "newest")
ESCALATED_CHOICES = ("only", "exclude")
CLAIM_CHOICES = ("mine", "unclaimed")
_TIER_VALUES = frozenset(t.value for t in Tier)
_VERDICT_VALUES = frozenset(v.value for v in Verdict)
_STATE_VALUES = frozenset(s.value for s in RequestState)


def _known(value: str, allowed: frozenset[str]) -> str:
    return value if value in allowed else ""


def _float(raw: str) -> float | None:
    try:
        return float(raw) if raw else None
    except ValueError:
        return None


def _date(raw: str) -> date | None:
    try:
        return date.fromisoformat(raw) if raw else None
    except ValueError:
        return None


def _latest_decisions() -> Any:
    return (
        select(DecisionRow.request_id, func.max(DecisionRow.id).label("decision_id"))
        .group_by(DecisionRow.request_id)
        .subquery()
    )


def _with_latest(stmt_columns: tuple[Any, ...]) -> Select[Any]:
    latest = _latest_decisions()
    return (
        select(*stmt_columns)
        .outerjoin(latest, latest.c.request_id == Request.id)
        .outerjoin(DecisionRow, DecisionRow.id == latest.c.decision_id)
    )


def _contains(column: Any, needle: str) -> ColumnElement[bool]:
    """Case-insensitive substring match with LIKE wildcards in `needle` taken literally."""
    escaped = needle.replace("/", "//").replace("%", "/%").replace("_", "/_")
    return column.ilike(f"%{escaped}%", escape="/")


def best_tier(tiers: list[str]) -> str | None:
    known = [Tier(t) for t in tiers if t in _TIER_VALUES]
    if not known:
        return None
    return min(known, key=lambda t: TIER_RANK[t]).value


def state_counts(db: Database) -> dict[str, int]:
    with db.session() as session:
        rows = session.execute(select(Request.state, func.count()).group_by(Request.state)).all()
    found = {state: int(count) for state, count in rows}
    return {s.value: found.get(s.value, 0) for s in RequestState}


# --- Queue -----------------------------------------------------------------------------------


@dataclass
class QueueFilter:
    platform: str = ""
    verdict: str = ""
    tier: str = ""
    requester: str = ""
    min_age_h: float | None = None
    max_age_h: float | None = None
    order: str = "oldest"
    escalated: str = ""  # "only" | "exclude" | "" (any)
    claim: str = ""  # "mine" | "unclaimed" | "" (any)

    @classmethod
    def from_query(cls, args: Mapping[str, str]) -> QueueFilter:
        """The filter from the page's query string; unknown values and bad numbers drop out."""
        order = args.get("order", "oldest")
        escalated = args.get("escalated", "")
        claim = args.get("claim", "")
        return cls(
            escalated=escalated if escalated in ESCALATED_CHOICES else "",
            claim=claim if claim in CLAIM_CHOICES else "",
            platform=args.get("platform", "").strip(),
            verdict=_known(args.get("verdict", ""), _VERDICT_VALUES),
            tier=_known(args.get("tier", ""), _TIER_VALUES),
            requester=args.get("requester", "").strip(),
            min_age_h=_float(args.get("min_age_h", "")),
            max_age_h=_float(args.get("max_age_h", "")),
            order=order if order in ORDERS else "oldest",
        )

    def as_query(self) -> dict[str, str]:
        """The filter as query-string fields, for links and the bulk form."""
        fields = {
            "platform": self.platform,
            "verdict": self.verdict,
            "tier": self.tier,
            "requester": self.requester,
            "min_age_h": "" if self.min_age_h is None else f"{self.min_age_h:g}",
            "max_age_h": "" if self.max_age_h is None else f"{self.max_age_h:g}",
            "order": self.order,
            "escalated": self.escalated,
            "claim": self.claim,
        }
        return {k: v for k, v in fields.items() if v}


@dataclass
class QueueItem:
    id: int
    platform: str
    requester: str
    created_at: datetime
    deadline: datetime | None
    overdue: bool
    escalated: bool
    escalated_by: str | None
    claimed_by: str | None
    verdict: str | None
    confidence: float | None
    best_tier: str | None
    evidence_count: int
    draft: str
    target_author: str
    target_text: str


def queue_items(db: Database, flt: QueueFilter, now: datetime, me: str = "") -> list[QueueItem]:
    """Items awaiting review that match `flt`; `me` is who "mine" means."""
    stmt = _with_latest((Request, DecisionRow)).where(
        Request.state == RequestState.AWAITING_REVIEW.value
    )
    if flt.escalated == "only":
        stmt = stmt.where(Request.escalated_by.is_not(None))
    elif flt.escalated == "exclude":
        stmt = stmt.where(Request.escalated_by.is_(None))
    if flt.claim == "mine":
        stmt = stmt.where(Request.claimed_by == me)
    elif flt.claim == "unclaimed":
        stmt = stmt.where(Request.claimed_by.is_(None))
    if flt.platform:
        stmt = stmt.where(Request.platform == flt.platform)
    if flt.requester:
        stmt = stmt.where(_contains(Request.requester, flt.requester.lstrip("@")))
    if flt.verdict:
        stmt = stmt.where(DecisionRow.verdict == flt.verdict)
    if flt.min_age_h is not None:
        stmt = stmt.where(Request.created_at <= now - timedelta(hours=flt.min_age_h))
    if flt.max_age_h is not None:
        stmt = stmt.where(Request.created_at >= now - timedelta(hours=flt.max_age_h))
    newest = flt.order == "newest"
    stmt = stmt.order_by(
        Request.created_at.desc() if newest else Request.created_at.asc(),
        Request.id.desc() if newest else Request.id.asc(),
    ).limit(QUEUE_LIMIT)
    with db.session() as session:
        rows = session.execute(stmt).all()
        decision_ids = [d.id for _, d in rows if d is not None]
        tiers: dict[int, list[str]] = {}
        if decision_ids:
            for decision_id, tier in session.execute(
                select(EvidenceRow.decision_id, EvidenceRow.tier).where(
                    EvidenceRow.decision_id.in_(decision_ids)
                )
            ):
                tiers.setdefault(decision_id, []).append(tier)
    items: list[QueueItem] = []
    for request, decision in rows:
        cited = tiers.get(decision.id, []) if decision is not None else []
        top = best_tier(cited)
        if flt.tier and top != flt.tier:
            continue
        target = request.target or {}
        items.append(
            QueueItem(
                id=request.id,
                platform=request.platform,
                requester=request.requester,
                created_at=request.created_at,
                deadline=request.review_deadline,
                overdue=bool(request.review_deadline and request.review_deadline < now),
                escalated=request.escalated_by is not None,
                escalated_by=request.escalated_by,
                claimed_by=request.claimed_by,
                verdict=decision.verdict if decision is not None else None,
                confidence=decision.confidence if decision is not None else None,
                best_tier=top,
                evidence_count=len(cited),
                draft=request.reply_text or "",
                target_author=str(target.get("author", "")),
                target_text=str(target.get("text", "")),
            )
        )
    return items


def next_item(db: Database, after: int | None, who: review.Reviewer) -> int | None:
    """The item to review after `after`: the next one in the queue's order (oldest first)
    that `who` may decide (not someone else's, not escalated unless `who` is senior), wrapping
    round to the start; None when there is none but `after`."""
    stmt = (
        select(Request.id, Request.created_at)
        .where(
            Request.state == RequestState.AWAITING_REVIEW.value,
            or_(Request.claimed_by.is_(None), Request.claimed_by == who.name),
        )
        .order_by(Request.created_at.asc(), Request.id.asc())
        .limit(QUEUE_LIMIT)
    )
    if not who.senior:
        stmt = stmt.where(Request.escalated_by.is_(None))
    with db.session() as session:
        rows = [(rid, created) for rid, created in session.execute(stmt)]
        current = session.get(Request, after) if after is not None else None
        position = (current.created_at, current.id) if current is not None else None
    if position is not None:
        for rid, created in rows:
            if (created, rid) > position:
                return rid
    others = [rid for rid, _ in rows if rid != after]
    return others[0] if others else None


# --- Decisions log ---------------------------------------------------------------------------


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
            verdict=_known(args.get("verdict", ""), _VERDICT_VALUES),
            state=_known(args.get("state", ""), _STATE_VALUES),
            since=_date(args.get("since", "")),
            until=_date(args.get("until", "")),
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


def decision_log(db: Database, flt: LogFilter) -> tuple[list[LogRow], int]:
    """One page of every request (newest first) matching the filter, and the total count."""
    stmt = _with_latest((Request, DecisionRow))
    if flt.platform:
        stmt = stmt.where(Request.platform == flt.platform)
    if flt.state:
        stmt = stmt.where(Request.state == flt.state)
    if flt.verdict:
        stmt = stmt.where(DecisionRow.verdict == flt.verdict)
    if flt.since:
        stmt = stmt.where(Request.created_at >= utc_day(flt.since))
    if flt.until:
        stmt = stmt.where(Request.created_at < utc_day(flt.until) + timedelta(days=1))
    if flt.q.strip():
        stmt = stmt.where(_text_match(flt.q.strip()))
    with db.session() as session:
        total = int(session.scalar(select(func.count()).select_from(stmt.subquery())) or 0)
        page = max(1, flt.page)
        rows = session.execute(
            stmt.order_by(Request.id.desc()).offset((page - 1) * PAGE_SIZE).limit(PAGE_SIZE)
        ).all()
    return [
        LogRow(
            id=r.id,
            created_at=r.created_at,
            platform=r.platform,
            requester=r.requester,
            state=r.state,
            mode=r.mode,
            verdict=d.verdict if d is not None else None,
            confidence=d.confidence if d is not None else None,
            target_text=str((r.target or {}).get("text", "")),
            reply_text=r.reply_text or "",
            reason=r.reason,
        )
        for r, d in rows
    ], total


def utc_day(day: date) -> datetime:
    """Midnight UTC of `day`: dates in filters and reports are UTC days."""
    return datetime.combine(day, time.min, tzinfo=UTC)


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
    return or_(*(_contains(column, needle) for column in columns for needle in needles))


# --- One request -----------------------------------------------------------------------------


@dataclass
class EvidenceView:
    row: EvidenceRow
    snapshot: DocumentRow | None


@dataclass
class RoundView:
    round: int
    queries: list[str]
    results: int
    used: list[str]
    unused: list[tuple[str, str]]  # (url, why not used)
    search_errors: list[str]


@dataclass
class ItemView:
    request: Request
    decision: DecisionRow | None
    decisions_count: int
    evidence: list[EvidenceView]
    guard_reports: list[GuardReport]
    drafts: list[str]
    analysis: dict[str, Any] | None
    rounds: list[RoundView]
    summons: dict[str, Any] = field(default_factory=dict)
    target: dict[str, Any] = field(default_factory=dict)
    # Passages retrieval found without an LLM to judge them (a `needs_llm` decision).
    candidates: list[Passage] = field(default_factory=list)

    @property
    def platform_rules(self) -> Platform:
        return reply_platform(self.request.platform)

    @property
    def evidence_urls(self) -> list[str]:
        return [e.row.url for e in self.evidence]


def _rounds(trace: dict[str, Any]) -> list[RoundView]:
    views: list[RoundView] = []
    for raw in trace.get("rounds") or []:
        documents = raw.get("documents") or []
        views.append(
            RoundView(
                round=int(raw.get("round", 0)),
                queries=[str(q) for q in raw.get("queries") or []],
                results=len(raw.get("results") or []),
                used=[str(d.get("url", "")) for d in documents if d.get("used")],
                unused=[
                    (str(d.get("url", "")), str(d.get("reason", "")))
                    for d in documents
                    if not d.get("used")
                ],
                search_errors=[str(e) for e in raw.get("search_errors") or []],
            )
        )
    return views


def _guard_reports(trace: dict[str, Any]) -> list[GuardReport]:
    reports = []
    for raw in trace.get("guard") or []:
        try:
            reports.append(GuardReport.model_validate(raw))
        except ValueError:
            continue  # an older trace shape: shown as absent rather than failing the page
    return reports


def load_item(session: Session, request_id: int) -> ItemView | None:
    request = session.get(Request, request_id)
    if request is None:
        return None
    decision = session.scalars(
        select(DecisionRow)
        .where(DecisionRow.request_id == request_id)
        .options(selectinload(DecisionRow.evidence), selectinload(DecisionRow.llm_calls))
        .order_by(DecisionRow.id.desc())
        .limit(1)
    ).first()
    count = int(
        session.scalar(
            select(func.count())
            .select_from(DecisionRow)
            .where(DecisionRow.request_id == request_id)
        )
        or 0
    )
    trace: dict[str, Any] = (decision.trace if decision is not None else None) or {}
    evidence = [
        EvidenceView(row=e, snapshot=_snapshot(session, e))
        for e in (decision.evidence if decision else [])
    ]
    return ItemView(
        request=request,
        decision=decision,
        decisions_count=count,
        evidence=evidence,
        guard_reports=_guard_reports(trace),
        drafts=[str(d) for d in trace.get("drafts") or []],
        analysis=trace.get("analysis"),
        rounds=_rounds(trace),
        summons=dict(request.summons or {}),
        target=dict(request.target or {}),
        candidates=_candidates(trace),
    )


def _candidates(trace: dict[str, Any]) -> list[Passage]:
    found = []
    for raw in trace.get("candidates") or []:
        try:
            found.append(Passage.model_validate(raw))
        except ValueError:
            continue
    return sorted(found, key=lambda p: -p.score)


def _snapshot(session: Session, evidence: EvidenceRow) -> DocumentRow | None:
    """The page text the quote was taken from. Looked up by canonical URL and hash; a page
    reached through a redirect is stored under its final URL, so the hash alone is the
    fallback (it is a hash of the text itself)."""
    if not evidence.content_hash:
        return None
    try:
        key = canonical_url(evidence.url)
    except ValueError:
        key = evidence.url
    found = snapshot_for(session, key, evidence.content_hash)
    if found is None:
        found = session.scalars(
            select(DocumentRow)
            .where(DocumentRow.content_hash == evidence.content_hash)
            .order_by(DocumentRow.id)
            .limit(1)
        ).first()
    return found


@dataclass(frozen=True)
class HistoryEntry:
    """One line of an item's history: a state change from the request's event log
    (`bot.lifecycle`: from, to, reason and actor) or a moderator's action (`bot.review`)."""

    at: datetime
    actor: str
    event: Event | None = None
    action: ReviewAction | None = None


def item_history(session: Session, request_id: int) -> list[HistoryEntry]:
    """The event log and the moderators' actions of one request, merged in time order."""
    entries = [HistoryEntry(e.at, e.actor, event=e) for e in event_log(session, request_id)]
    entries += [
        HistoryEntry(a.created_at, a.actor, action=a) for a in review.history(session, request_id)
    ]
    # sorted() is stable, so rows of one moment keep their log order; an action sorts before
    # an event of the same moment, as the action is what caused it.
    return sorted(entries, key=lambda h: (h.at, h.event is not None))
