"""The audit report's detail: the rows behind its figures.

An auditor who reads "3 abstained" must be able to see which three, and one who reads "2
replies posted" must be able to open them. This module builds what the figures stand on: one
row per request (the drill-down target of every chart and table), the posted replies with links
to them, each moderator's actions with the time they took, and the list of request ids behind
each figure's key (`outcome:abstained`, `verdict:refuted`, ...), which the report links to.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from sys import intern

from storage import report as report_db
from storage.db import Session
from storage.models import DecisionRow, Request, ReviewAction

# Moderator actions that decide a draft (the others leave it open).
DECIDING = ("approve", "reject")
# Actions not taken by a person: the review deadline passing.
SYSTEM_ACTORS = frozenset({"system"})


def anchor(key: str) -> str:
    """A stable HTML id for a figure's key: keys are data (publishers, reasons), ids may not
    be, so the id is a digest of the key."""
    return "k-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


def reply_url(platform: str, reply_id: str | None) -> str | None:
    """A link to a posted reply on its platform; None where there is no web page (local)."""
    if not reply_id:
        return None
    if platform == "x" and reply_id.isdigit():
        # The `i/web` form needs no account name and always redirects to the post.
        return f"https://x.com/i/web/status/{reply_id}"
    if platform == "bluesky" and reply_id.startswith("at://"):
        parts = reply_id.removeprefix("at://").split("/")
        if len(parts) == 3 and parts[1] == "app.bsky.feed.post":
            return f"https://bsky.app/profile/{parts[0]}/post/{parts[2]}"
    return None


def post_url(request: Request) -> str | None:
    """The permalink of the post that was checked, where the platform gave one."""
    url = (request.target or {}).get("url")
    return url if isinstance(url, str) and url.startswith(("https://", "http://")) else None


@dataclass(slots=True)  # one per reply posted in the period: no per-instance dict
class PostedReply:
    request_id: int
    platform: str
    posted_at: datetime | None
    reply_id: str
    url: str | None  # the reply on its platform
    post_url: str | None  # the post it answered
    text: str
    verdict: str | None
    cited: list[str]
    approved_by: str | None  # None: posted in live mode without review


@dataclass
class ModeratorStats:
    actor: str
    actions: Counter[str] = field(default_factory=Counter)
    requests: set[int] = field(default_factory=set)
    # Seconds from the draft being queued (its decision) to this moderator's approve or reject.
    review_s: list[float] = field(default_factory=list)

    @property
    def decided(self) -> int:
        return len(self.review_s)

    def percentile(self, q: float) -> float | None:
        if not self.review_s:
            return None
        ordered = sorted(self.review_s)
        return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


@dataclass(slots=True)  # one per request ever taken in: no per-instance dict
class RequestRow:
    """One request as the report's table of decisions shows it."""

    id: int
    created_at: datetime
    platform: str
    mode: str
    state: str
    verdict: str | None
    status: str | None
    reason: str
    actions: list[str]  # "mod_demo: approve"
    reply_url: str | None
    post_url: str | None
    cost_usd: float


def queued_at(
    request: Request, action: ReviewAction, entered_review: Sequence[datetime] = ()
) -> datetime:
    """When the draft an action acted on was queued: the request's last move into review
    before the action (its state log), else the last decision made before it."""
    logged = [at for at in entered_review if at <= action.created_at]
    if logged:
        return max(logged)
    before = [d.created_at for d in request.decisions if d.created_at <= action.created_at]
    return max(before) if before else request.created_at


def moderators(
    requests: list[Request],
    actions: dict[int, list[ReviewAction]],
    entered_review: Mapping[int, Sequence[datetime]] | None = None,
) -> list[ModeratorStats]:
    """Each person's actions and review times, busiest first. `entered_review`: per request,
    when it moved into awaiting_review (from the request event log)."""
    entered = entered_review or {}
    by_request = {r.id: r for r in requests}
    stats: dict[str, ModeratorStats] = {}
    for request_id, request_actions in actions.items():
        request = by_request.get(request_id)
        for action in request_actions:
            if action.actor in SYSTEM_ACTORS:
                continue
            entry = stats.setdefault(action.actor, ModeratorStats(action.actor))
            entry.actions[action.action] += 1
            entry.requests.add(request_id)
            if action.action in DECIDING and request is not None:
                since = queued_at(request, action, entered.get(request_id, ()))
                waited = (action.created_at - since).total_seconds()
                entry.review_s.append(max(0.0, waited))
    return sorted(stats.values(), key=lambda s: (-sum(s.actions.values()), s.actor))


def posted_replies(
    requests: list[Request], actions: dict[int, list[ReviewAction]]
) -> list[PostedReply]:
    """Every reply that reached a platform, oldest first."""
    posted: list[PostedReply] = []
    for request in requests:
        if request.state != "posted" or not request.reply_id:
            continue
        latest = request.decisions[-1] if request.decisions else None
        approvers = [a.actor for a in actions.get(request.id, []) if a.action == "approve"]
        posted.append(
            PostedReply(
                request_id=request.id,
                platform=request.platform,
                posted_at=request.posted_at,
                reply_id=request.reply_id,
                url=reply_url(request.platform, request.reply_id),
                post_url=post_url(request),
                text=request.reply_text or (latest.reply if latest else "") or "",
                verdict=latest.verdict if latest else None,
                cited=[str(u) for u in (latest.urls if latest else [])],
                approved_by=approvers[-1] if approvers else None,
            )
        )
    return sorted(posted, key=lambda p: (p.posted_at is None, p.posted_at, p.request_id))


def request_rows(
    requests: list[Request], actions: dict[int, list[ReviewAction]]
) -> list[RequestRow]:
    rows: list[RequestRow] = []
    # A row per request ever taken in is held until the page is written: the few values that
    # repeat on every row (platform, state, verdict, reason, who did what) are kept once.
    for request in requests:
        latest: DecisionRow | None = request.decisions[-1] if request.decisions else None
        rows.append(
            RequestRow(
                id=request.id,
                created_at=request.created_at,
                platform=intern(request.platform),
                mode=intern(request.mode),
                state=intern(request.state),
                verdict=intern(latest.verdict) if latest and latest.verdict else None,
                status=intern(latest.status) if latest and latest.status else None,
                reason=intern(
                    request.reason or "; ".join(map(str, latest.reasons if latest else []))
                ),
                actions=[intern(f"{a.actor}: {a.action}") for a in actions.get(request.id, [])],
                reply_url=reply_url(request.platform, request.reply_id),
                post_url=post_url(request),
                cost_usd=sum(d.cost_usd for d in request.decisions),
            )
        )
    return rows


class Drill:
    """The request ids behind each figure's key, in request order, each id once per key."""

    def __init__(self) -> None:
        self.ids: dict[str, list[int]] = {}

    def add(self, key: str, request_id: int) -> None:
        ids = self.ids.setdefault(key, [])
        if not ids or ids[-1] != request_id:
            ids.append(request_id)

    def get(self, key: str) -> list[int]:
        return self.ids.get(key, [])


def transitions(session: Session, request_ids: Sequence[int], drill: Drill) -> Counter[str]:
    """Every state change in the requests' event log, counted as "from -> to (actor kind)":
    how often work was retried, recovered from a dead worker, expired or decided by whom.
    The requests go into `drill` under "transition:<label>"."""
    counts: Counter[str] = Counter()
    if not request_ids:
        return counts
    for request_id, from_state, to_state, actor in report_db.events(session, request_ids):
        label = f"{from_state or 'new'} -> {to_state} ({actor.partition(':')[0]})"
        counts[label] += 1
        drill.add(f"transition:{label}", request_id)
    return counts


def duration(seconds: float | None) -> str:
    """Seconds as people read a wait: "45 s", "12 min", "3.5 h"; "-" when there is none."""
    if seconds is None:
        return "-"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
