"""The review queue in SQL: every filter applied in the database before the page is cut, the
true count of what matches, and only the columns a list shows (never a decision's trace).

At 10,000 pending items a page of the queue reads the ids of one page (the filters, the order
and the offset run in SQL), then the shown columns of those rows alone. The best source tier
of an item is computed in SQL too (the best rank among its latest decision's evidence), so a
tier filter counts every item that matches, not only those on the first page.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, cast

from sqlalchemy import ColumnElement, Select, Table, bindparam, func, or_, select, update
from sqlalchemy.orm import Session

from pipeline.records import TIER_RANK, Tier, Verdict
from storage.models import DecisionRow, EvidenceRow, Request, RequestState

PER_PAGE = 50
MAX_PER_PAGE = 200
ORDERS = ("oldest", "newest")
ESCALATED_CHOICES = ("only", "exclude")
CLAIM_CHOICES = ("mine", "unclaimed")
_TIER_VALUES = frozenset(t.value for t in Tier)
_VERDICT_VALUES = frozenset(v.value for v in Verdict)
_AWAITING = RequestState.AWAITING_REVIEW.value
_NO_TIER = 99  # the rank of an item that cites nothing: sorts after every tier


def known(value: str, allowed: frozenset[str]) -> str:
    return value if value in allowed else ""


def number(raw: str) -> float | None:
    try:
        return float(raw) if raw else None
    except ValueError:
        return None


def day(raw: str) -> date | None:
    try:
        return date.fromisoformat(raw) if raw else None
    except ValueError:
        return None


# No page past this: (page - 1) * per_page must stay a 64-bit offset in SQL.
MAX_PAGE = 10**9


def positive(raw: str, default: int, most: int = MAX_PAGE) -> int:
    """A page number or size from a query string: bad or small values give the default, large
    ones `most`."""
    try:
        value = int(raw)
    except ValueError:
        return default
    if value < 1:
        return default
    return min(value, most)


def contains(column: Any, needle: str) -> ColumnElement[bool]:
    """Case-insensitive substring match with LIKE wildcards in `needle` taken literally."""
    escaped = needle.replace("/", "//").replace("%", "/%").replace("_", "/_")
    return column.ilike(f"%{escaped}%", escape="/")


def latest_decision_id() -> Any:
    """The id of the request's latest decision, correlated to the outer `Request` row: read
    for one request at a time through the `decisions.request_id` index."""
    return (
        select(func.max(DecisionRow.id))
        .where(DecisionRow.request_id == Request.id)
        .correlate(Request)
        .scalar_subquery()
    )


_RANK_TIER = {rank: tier.value for tier, rank in TIER_RANK.items()}


def best_tier_rank(tiers: Iterable[str]) -> int | None:
    """The best (lowest) tier rank among one decision's evidence: `_NO_TIER` for tiers no rank
    knows, None when it cites nothing."""
    ranks = [TIER_RANK.get(Tier(t), _NO_TIER) if t in _TIER_VALUES else _NO_TIER for t in tiers]
    return min(ranks) if ranks else None


def mark_latest(session: Session, latest: Sequence[tuple[int, str | None, int | None]]) -> None:
    """Record (request id, verdict, best tier rank) of decisions just written, in the order
    written (the last of a request's wins, as its id is the highest). The row's `updated_at`
    stays: a decision written is not a change of the request's state."""
    if not latest:
        return
    table = cast(Table, Request.__table__)
    session.execute(
        update(table)
        .where(table.c.id == bindparam("rid"))
        .values(
            latest_verdict=bindparam("verdict"),
            latest_tier_rank=bindparam("rank"),
            updated_at=table.c.updated_at,
        ),
        [{"rid": rid, "verdict": verdict, "rank": rank} for rid, verdict, rank in latest],
    )


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
            verdict=known(args.get("verdict", ""), _VERDICT_VALUES),
            tier=known(args.get("tier", ""), _TIER_VALUES),
            requester=args.get("requester", "").strip(),
            min_age_h=number(args.get("min_age_h", "")),
            max_age_h=number(args.get("max_age_h", "")),
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


@dataclass
class QueuePage:
    items: list[QueueItem]
    total: int  # every item matching the filter, not only this page's
    page: int
    per_page: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    @property
    def first(self) -> int:
        """The 1-based position of the page's first item (0 when the page is empty)."""
        return (self.page - 1) * self.per_page + 1 if self.items else 0

    @property
    def last(self) -> int:
        return self.first + len(self.items) - 1 if self.items else 0


def matching(flt: QueueFilter, now: datetime, me: str = "") -> Select[Any]:
    """The ids of the items awaiting review that match `flt`, in the queue's order; `me` is
    who "mine" means. Joins a decision only when a filter needs one."""
    stmt = select(Request.id).where(Request.state == _AWAITING)
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
        stmt = stmt.where(contains(Request.requester, flt.requester.lstrip("@")))
    if flt.min_age_h is not None:
        stmt = stmt.where(Request.created_at <= now - timedelta(hours=flt.min_age_h))
    if flt.max_age_h is not None:
        stmt = stmt.where(Request.created_at >= now - timedelta(hours=flt.max_age_h))
    # The latest decision's verdict and best tier as the request row keeps them (`mark_latest`).
    if flt.verdict:
        stmt = stmt.where(Request.latest_verdict == flt.verdict)
    if flt.tier:
        stmt = stmt.where(Request.latest_tier_rank == TIER_RANK[Tier(flt.tier)])
    newest = flt.order == "newest"
    return stmt.order_by(
        Request.created_at.desc() if newest else Request.created_at.asc(),
        Request.id.desc() if newest else Request.id.asc(),
    )


def count(session: Session, stmt: Select[Any]) -> int:
    return int(
        session.scalar(select(func.count()).select_from(stmt.order_by(None).subquery())) or 0
    )


def queue_page(
    session: Session,
    flt: QueueFilter,
    now: datetime,
    me: str = "",
    page: int = 1,
    per_page: int = PER_PAGE,
) -> QueuePage:
    """One page of the queue and the number of every item that matches."""
    stmt = matching(flt, now, me)
    total = count(session, stmt)
    pages = max(1, -(-total // per_page))
    page = min(max(1, page), pages)
    ids = list(session.scalars(stmt.offset((page - 1) * per_page).limit(per_page)))
    return QueuePage(_items(session, ids, now), total, page, per_page)


def matching_ids(
    session: Session, flt: QueueFilter, now: datetime, me: str = "", *, bulk: bool = False
) -> list[int]:
    """Every id that matches, in order (select-all of the filtered set). With `bulk`, the ones
    a bulk action may take: escalated items are decided one by one."""
    stmt = matching(flt, now, me)
    if bulk:
        stmt = stmt.where(Request.escalated_by.is_(None))
    return list(session.scalars(stmt))


def _items(session: Session, ids: Sequence[int], now: datetime) -> list[QueueItem]:
    if not ids:
        return []
    latest = latest_decision_id()
    evidence_count = (
        select(func.count(EvidenceRow.id))
        .where(EvidenceRow.decision_id == DecisionRow.id)
        .scalar_subquery()
    )
    rows = session.execute(
        select(
            Request.id,
            Request.platform,
            Request.requester,
            Request.created_at,
            Request.review_deadline,
            Request.escalated_by,
            Request.claimed_by,
            Request.reply_text,
            Request.target,
            DecisionRow.verdict,
            DecisionRow.confidence,
            Request.latest_tier_rank,
            evidence_count,
        )
        .outerjoin(DecisionRow, DecisionRow.id == latest)
        .where(Request.id.in_(list(ids)))
    ).all()
    by_id = {row[0]: row for row in rows}
    items = []
    for rid in ids:
        row = by_id.get(rid)
        if row is None:
            continue  # decided meanwhile
        target = row.target or {}
        rank = row[11]
        items.append(
            QueueItem(
                id=row.id,
                platform=row.platform,
                requester=row.requester,
                created_at=row.created_at,
                deadline=row.review_deadline,
                overdue=bool(row.review_deadline and row.review_deadline < now),
                escalated=row.escalated_by is not None,
                escalated_by=row.escalated_by,
                claimed_by=row.claimed_by,
                verdict=row.verdict,
                confidence=row.confidence,
                best_tier=_RANK_TIER.get(rank) if rank is not None else None,
                evidence_count=int(row[12] or 0),
                draft=row.reply_text or "",
                target_author=str(target.get("author", "")),
                target_text=str(target.get("text", "")),
            )
        )
    return items


def next_item(session: Session, after: int | None, name: str, senior: bool) -> int | None:
    """The item to review after `after`: the next one in the queue's order (oldest first)
    that `name` may decide (not someone else's, not escalated unless `senior`), wrapping
    round to the start; None when there is none but `after`."""
    stmt = select(Request.id).where(
        Request.state == _AWAITING,
        or_(Request.claimed_by.is_(None), Request.claimed_by == name),
    )
    if not senior:
        stmt = stmt.where(Request.escalated_by.is_(None))
    order = (Request.created_at.asc(), Request.id.asc())
    current = session.get(Request, after) if after is not None else None
    if current is not None:
        later = session.scalars(
            stmt.where(
                or_(
                    Request.created_at > current.created_at,
                    (Request.created_at == current.created_at) & (Request.id > current.id),
                )
            )
            .order_by(*order)
            .limit(1)
        ).first()
        if later is not None:
            return later
    if after is not None:
        stmt = stmt.where(Request.id != after)
    return session.scalars(stmt.order_by(*order).limit(1)).first()


def state_counts(session: Session, exclude_platform: str) -> dict[str, int]:
    """Requests per state, leaving out one platform's rows (`factnote check` runs, which
    `factnote status` counts apart). Each state is counted from its range of the (state, ...)
    index, all in one statement (a GROUP BY over the index took 26 ms at 110,000 requests,
    the counts by range 2 ms), and the left-out platform's few rows are taken off: a filter on
    the platform would read every request row, posts' JSON and all."""
    states = [s.value for s in RequestState]
    every = session.execute(
        select(
            *(
                select(func.count()).where(Request.state == state).scalar_subquery()
                for state in states
            )
        )
    ).one()
    apart = dict(
        session.execute(
            select(Request.state, func.count())
            .where(Request.platform == exclude_platform)
            .group_by(Request.state)
        ).all()
    )
    return {
        state: int(n) - int(apart.get(state, 0)) for state, n in zip(states, every, strict=True)
    }


def platform_count(session: Session, platform: str) -> int:
    return int(
        session.scalar(
            select(func.count()).select_from(Request).where(Request.platform == platform)
        )
        or 0
    )


def platforms(session: Session) -> list[str]:
    """Every platform with a request: one step of the (platform, summons_id) index per
    platform (the next one after the last found), not a scan of every entry."""
    step = select(func.min(Request.platform).label("platform")).cte("found", recursive=True)
    after = select(func.min(Request.platform)).where(Request.platform > step.c.platform)
    found = step.union_all(select(after.scalar_subquery()).where(step.c.platform.is_not(None)))
    return sorted(session.scalars(select(found.c.platform).where(found.c.platform.is_not(None))))


def requests_by_id(session: Session, ids: Sequence[int]) -> dict[int, Request]:
    """The requests of `ids` that exist, by id (a bulk action's plan checks each)."""
    return {
        row.id: row for row in session.scalars(select(Request).where(Request.id.in_(list(ids))))
    }
