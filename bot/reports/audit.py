"""The audit report: one self-contained HTML file summarising what the bot did in a period.

Figures are computed from the request, decision, evidence and review-action rows; each chart is
matplotlib-rendered SVG inlined in the page, with the same numbers in a table beside it, so the
report can be read (and checked) without the charts. When nothing was posted in the period the
report says so in a banner: that is the dry-run audit auditors rely on.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup
from matplotlib import rc_context
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from bot.ops.summary import CLI_PLATFORM
from bot.reports.batches import BATCH, Merged, filled_days
from bot.reports.detail import (
    Drill,
    ModeratorStats,
    PostedReply,
    RequestRow,
    anchor,
    duration,
    moderators,
    posted_replies,
    request_rows,
    transitions,
)
from bot.reports.notes import NotesSummary, notes_summary
from bot.reports.video import VideoCounts, video_counts
from pipeline.records import TIER_RANK, Tier, utcnow
from storage import report as report_db
from storage.db import Database, Session
from storage.metric_totals import guard_rule, guard_rules
from storage.models import Request, RequestState, ReviewAction
from storage.requests import review_actions_of

TEMPLATES = Path(__file__).resolve().parent / "templates"

# Request states grouped into the outcomes an auditor asks about, in display order.
OUTCOMES: tuple[tuple[str, tuple[RequestState, ...]], ...] = (
    ("replied", (RequestState.POSTED,)),
    ("reply drafted, not posted (dry run)", (RequestState.DRY_RUN,)),
    ("queued for review", (RequestState.AWAITING_REVIEW,)),
    (
        "in progress",
        (
            RequestState.RECEIVED,
            RequestState.QUEUED,
            RequestState.PROCESSING,
            RequestState.RETRY,
            RequestState.POSTING,
        ),
    ),
    ("abstained", (RequestState.ABSTAINED,)),
    ("rejected by a moderator", (RequestState.REJECTED,)),
    ("expired in review", (RequestState.EXPIRED,)),
    ("skipped at triage", (RequestState.SKIPPED,)),
    ("failed", (RequestState.FAILED,)),
    ("needs an LLM", (RequestState.NEEDS_LLM,)),
)
_OUTCOME_OF = {state: label for label, states in OUTCOMES for state in states}
_STATES = frozenset(state.value for state in RequestState)

_RC: Any = {
    "svg.fonttype": "none",  # text stays text: smaller, searchable, selectable
    "svg.hashsalt": "factnote",  # stable element ids, so the same data gives the same file
    "font.family": "DejaVu Sans",  # ships with matplotlib
    "font.size": 9,
    "text.parse_math": False,  # labels are data (domains, reasons): "$" is not math
}
_BAR = "#1f5fa8"


@dataclass
class ChecksSummary:
    """`factnote check` runs in the period: recorded like bot requests, reported apart, since
    nobody asked the bot for them and nothing of theirs is ever posted."""

    total: int = 0
    states: Counter[str] = field(default_factory=Counter)
    cost: float = 0.0
    rows: list[RequestRow] = field(default_factory=list)


@dataclass
class ReportData:
    since: datetime | None
    generated_at: datetime
    first: datetime | None
    last: datetime | None
    total: int
    states: Counter[str]
    outcomes: list[tuple[str, int]]
    abstain_reasons: Counter[str]
    skip_reasons: Counter[str]
    modes: Counter[str]
    posted: int
    drafted: int  # reply decisions that were not posted (dry run, review, rejected, expired)
    volume: list[tuple[date, int]]
    verdicts: Counter[str]
    tiers: Counter[str]
    publishers: Counter[str]
    evidence_per_reply: Counter[int]
    latencies: list[float]
    costs: list[float]
    total_cost: float
    prompt_tokens: int
    completion_tokens: int
    decisions: int
    guard_failures: Counter[str]
    agreement: Counter[str]
    reject_reasons: Counter[str]
    posted_replies: list[PostedReply] = field(default_factory=list)
    moderators: list[ModeratorStats] = field(default_factory=list)
    rows: list[RequestRow] = field(default_factory=list)
    drill: Drill = field(default_factory=Drill)
    checks: ChecksSummary = field(default_factory=ChecksSummary)
    notes: NotesSummary = field(default_factory=NotesSummary)  # Community Notes written
    transitions: Counter[str] = field(default_factory=Counter)  # the event log's changes
    videos: VideoCounts = field(default_factory=VideoCounts)  # video posts, what was read
    charts: dict[str, Markup] = field(default_factory=dict)

    @property
    def nothing_posted(self) -> bool:
        return self.posted == 0


def abstain_category(reasons: Iterable[str]) -> str:
    """The reason an abstention is counted under: the rule for guard refusals ("guard:
    thin_evidence"), otherwise the text before the first colon ("not_enough_evidence")."""
    for reason in reasons:
        if reason.startswith("reused the answer of"):
            continue
        head, _, rest = reason.partition(":")
        if head.strip() == "guard" and rest:
            return f"guard: {guard_rule(rest.strip())}"
        return head.strip() or "unspecified"
    return "unspecified"


def agreement_of(actions: list[ReviewAction]) -> str | None:
    """How moderators treated one draft: approved as-is, edited then approved, rejected,
    escalated (still open) or expired; None when no one looked at it."""
    kinds = [a.action for a in actions]
    if "reject" in kinds:
        return "rejected"
    if "approve" in kinds:
        return "edited, then approved" if "edit" in kinds else "approved as-is"
    if "expire" in kinds:
        return "expired without a decision"
    if "escalate" in kinds:
        return "escalated, open"
    if "edit" in kinds:
        return "edited, open"
    return None


def collect(db: Database, since: datetime | None = None, now: datetime | None = None) -> ReportData:
    """The report's figures, read a batch of requests at a time (`bot.reports.batches`)."""
    generated = now or utcnow()
    merged: Merged | None = None
    checks = ChecksSummary()
    videos = VideoCounts()
    with db.session() as session:
        after = 0
        while True:
            requests = _batch(session, after, since)
            if not requests:
                break
            after = requests[-1].id
            part, cli = _summarise_batch(session, requests, since, generated)
            if merged is None:
                merged = Merged(part)
            else:
                merged.add(part)
            checks.total += len(cli.rows)
            checks.states.update(cli.states)
            checks.cost += cli.cost
            checks.rows.extend(cli.rows)
            bot_requests = [r for r in requests if r.platform != CLI_PLATFORM]
            videos.add(video_counts(session, bot_requests, merged.data.drill))
            session.expunge_all()  # the batch's rows go; only the figures stay
        if merged is None:
            merged = Merged(_summarise([], {}, since, generated, {}, {}))
        groups = [(label, tuple(s.value for s in states)) for label, states in OUTCOMES]
        data = merged.finish(groups)
        data.tiers = Counter(
            dict(sorted(data.tiers.items(), key=lambda kv: TIER_RANK.get(Tier(kv[0]), 9)))
        )
        data.checks = checks
        data.videos = videos
        data.notes = notes_summary(session, since, data.drill)
        return data


def _batch(session: Session, after: int, since: datetime | None) -> list[Request]:
    """The next requests after id `after`, with their decisions (no traces) and evidence."""
    return report_db.request_batch(session, after, since, BATCH)


def _summarise_batch(
    session: Session, requests: list[Request], since: datetime | None, generated: datetime
) -> tuple[ReportData, ChecksSummary]:
    ids = [r.id for r in requests]
    actions: dict[int, list[ReviewAction]] = {}
    for action in review_actions_of(session, ids):
        actions.setdefault(action.request_id, []).append(action)
    entered = report_db.entered(session, ids, RequestState.AWAITING_REVIEW.value)
    # Only the guard reports of each trace, extracted in SQL: a trace is tens of kB.
    guard = report_db.guard_reports(session, ids)
    bot = [r for r in requests if r.platform != CLI_PLATFORM]
    data = _summarise(bot, actions, since, generated, entered, guard)
    data.transitions = transitions(session, [r.id for r in bot], data.drill)
    cli = [r for r in requests if r.platform == CLI_PLATFORM]
    checks = ChecksSummary(
        total=len(cli),
        states=Counter(r.state for r in cli),
        cost=sum(d.cost_usd for r in cli for d in r.decisions),
        rows=request_rows(cli, actions),
    )
    return data, checks


@dataclass
class _Spend:
    """What every run cost (each decision, retries included) and what the guard refused."""

    costs: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    prompt: int = 0
    completion: int = 0
    decisions: int = 0
    guard: Counter[str] = field(default_factory=Counter)


def _spend(requests: list[Request], drill: Drill, guard: dict[int, list[Any]]) -> _Spend:
    spend = _Spend()
    for request in requests:
        for decision in request.decisions:  # every run costs, and every draft meets the guard
            spend.decisions += 1
            spend.costs.append(decision.cost_usd)
            spend.prompt += decision.prompt_tokens
            spend.completion += decision.completion_tokens
            total = (decision.timings or {}).get("total")
            if isinstance(total, int | float):
                spend.latencies.append(float(total))
            rules = guard_rules({"guard": guard.get(decision.id) or []})
            spend.guard.update(rules)
            for rule in rules:
                drill.add(f"guard:{rule}", request.id)
    return spend


@dataclass
class _Outcomes:
    """What the latest decision of each request said, and what its posted replies cited."""

    verdicts: Counter[str] = field(default_factory=Counter)
    abstain: Counter[str] = field(default_factory=Counter)
    per_reply: Counter[int] = field(default_factory=Counter)
    tiers: Counter[str] = field(default_factory=Counter)
    publishers: Counter[str] = field(default_factory=Counter)
    drafted: int = 0


def _outcomes(requests: list[Request], drill: Drill) -> _Outcomes:
    out = _Outcomes()
    for request in requests:
        latest = request.decisions[-1] if request.decisions else None
        if latest is None:
            continue
        verdict = latest.verdict or "none"
        out.verdicts[verdict] += 1
        drill.add(f"verdict:{verdict}", request.id)
        if request.state == RequestState.ABSTAINED.value:
            category = abstain_category(latest.reasons or [])
            out.abstain[category] += 1
            drill.add(f"abstain:{category}", request.id)
        if latest.status != "reply":
            continue
        if request.state != RequestState.POSTED.value:
            out.drafted += 1  # a draft is not a reply: only what reached a platform counts
            continue
        out.per_reply[len(latest.evidence)] += 1
        drill.add(f"evidence:{len(latest.evidence)}", request.id)
        for evidence in latest.evidence:
            publisher = evidence.domain or "unknown"
            out.tiers[evidence.tier] += 1
            out.publishers[publisher] += 1
            drill.add(f"tier:{evidence.tier}", request.id)
            drill.add(f"publisher:{publisher}", request.id)
    return out


def _moderation(
    actions: dict[int, list[ReviewAction]], drill: Drill
) -> tuple[Counter[str], Counter[str]]:
    """(agreement kinds, reject reasons) over the moderators' actions."""
    agreement: Counter[str] = Counter()
    rejected: Counter[str] = Counter()
    for request_id in sorted(actions):
        kind = agreement_of(actions[request_id])
        if kind is not None:
            agreement[kind] += 1
            drill.add(f"agreement:{kind}", request_id)
        for action in actions[request_id]:
            if action.action == "reject":
                reason = str((action.detail or {}).get("reason", "unspecified"))
                rejected[reason] += 1
                drill.add(f"reject:{reason}", request_id)
    return agreement, rejected


def _volume(requests: list[Request], drill: Drill) -> list[tuple[date, int]]:
    """Requests per day from the first to the last; zero days are shown, so gaps are visible."""
    days: Counter[date] = Counter()
    for request in requests:
        day = request.created_at.date()
        days[day] += 1
        drill.add(f"day:{day.isoformat()}", request.id)
    return filled_days(days)


def _states(requests: list[Request], drill: Drill) -> tuple[Counter[str], Counter[str]]:
    """(requests by state, skipped ones by reason), each request filed under its outcome."""
    states: Counter[str] = Counter()
    skips: Counter[str] = Counter()
    for request in requests:
        states[request.state] += 1
        drill.add(f"state:{request.state}", request.id)
        label = _OUTCOME_OF.get(RequestState(request.state)) if request.state in _STATES else None
        if label is not None:
            drill.add(f"outcome:{label}", request.id)
        if request.state == RequestState.SKIPPED.value:
            reason = request.reason or "unspecified"
            skips[reason] += 1
            drill.add(f"skip:{reason}", request.id)
    return states, skips


def _summarise(
    requests: list[Request],
    actions: dict[int, list[ReviewAction]],
    since: datetime | None,
    generated: datetime,
    entered_review: dict[int, list[datetime]],
    guard: dict[int, list[Any]],
) -> ReportData:
    drill = Drill()
    ids = {r.id for r in requests}
    mine = {i: a for i, a in actions.items() if i in ids}
    states, skips = _states(requests, drill)
    spend = _spend(requests, drill, guard)
    out = _outcomes(requests, drill)
    agreement, rejected = _moderation(mine, drill)
    created = [r.created_at for r in requests]
    return ReportData(
        since=since,
        generated_at=generated,
        first=min(created) if created else None,
        last=max(created) if created else None,
        total=len(requests),
        states=states,
        outcomes=[(label, sum(states[s.value] for s in group)) for label, group in OUTCOMES],
        abstain_reasons=out.abstain,
        skip_reasons=skips,
        modes=Counter(r.mode for r in requests),
        posted=states[RequestState.POSTED.value],
        drafted=out.drafted,
        volume=_volume(requests, drill),
        verdicts=out.verdicts,
        tiers=Counter(
            dict(sorted(out.tiers.items(), key=lambda kv: TIER_RANK.get(Tier(kv[0]), 9)))
        ),
        publishers=out.publishers,
        evidence_per_reply=out.per_reply,
        latencies=spend.latencies,
        costs=spend.costs,
        total_cost=sum(spend.costs),
        prompt_tokens=spend.prompt,
        completion_tokens=spend.completion,
        decisions=spend.decisions,
        guard_failures=spend.guard,
        agreement=agreement,
        reject_reasons=rejected,
        posted_replies=posted_replies(requests, mine),
        moderators=moderators(requests, mine, entered_review),
        rows=request_rows(requests, mine),
        drill=drill,
    )


# --- charts ----------------------------------------------------------------------------------


def _svg(fig: Figure) -> Markup:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    # Bar links lead within the page: matplotlib's target="_blank" would open a new tab.
    svg = buffer.getvalue().replace(' target="_blank"', "")
    # Inline SVG needs no XML prolog or DOCTYPE. matplotlib escapes text it writes (&, <, >),
    # so labels taken from data cannot inject markup: the output is ours to mark safe.
    return Markup(svg[svg.index("<svg") :])  # noqa: S704


def _label(text: str, width: int = 48) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def bar_chart(
    items: Sequence[tuple[str, float]],
    title: str,
    *,
    horizontal: bool = True,
    prefix: str | None = None,
) -> Markup:
    """Bars for (label, value) items. With a `prefix`, each bar links to the table row of its
    key (`prefix:label`), whose request ids link on to the decisions: the drill-down."""
    with rc_context(_RC):
        height = max(1.6, 0.28 * len(items) + 0.8) if horizontal else 2.6
        fig = Figure(figsize=(7.0, height))
        ax = fig.subplots()
        labels = [_label(label) for label, _ in items]
        values = [value for _, value in items]
        if horizontal:
            bars = ax.barh(range(len(items)), values, color=_BAR)
            ax.set_yticks(range(len(items)), labels)
            ax.invert_yaxis()
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        else:
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            bars = ax.bar(range(len(items)), values, color=_BAR)
            step = max(1, len(items) // 12)
            ticks = list(range(0, len(items), step))
            ax.set_xticks(ticks, [labels[i] for i in ticks], rotation=30, ha="right")
        if prefix is not None:
            for bar, (label, _) in zip(bars, items, strict=True):
                bar.set_url("#" + anchor(f"{prefix}:{label}"))
        ax.set_title(title)
        ax.spines[["top", "right"]].set_visible(False)
        return _svg(fig)


def histogram(values: list[float], title: str, unit: str) -> Markup:
    with rc_context(_RC):
        fig = Figure(figsize=(7.0, 2.6))
        ax = fig.subplots()
        ax.hist(values, bins=min(20, max(1, len(set(values)))), color=_BAR)
        ax.set_title(title)
        ax.set_xlabel(unit)
        ax.set_ylabel("decisions")
        ax.spines[["top", "right"]].set_visible(False)
        return _svg(fig)


def _charts(data: ReportData) -> dict[str, Markup]:
    charts: dict[str, Markup] = {}
    if data.volume:
        charts["volume"] = bar_chart(
            [(d.isoformat(), n) for d, n in data.volume],
            "Requests per day",
            horizontal=False,
            prefix="day",
        )
    if data.total:
        charts["outcomes"] = bar_chart(
            [(k, v) for k, v in data.outcomes if v], "Outcomes", prefix="outcome"
        )
    if data.verdicts:
        charts["verdicts"] = bar_chart(
            data.verdicts.most_common(), "Verdicts (latest decision)", prefix="verdict"
        )
    if data.tiers:
        charts["tiers"] = bar_chart(
            list(data.tiers.items()), "Evidence cited in posted replies, by tier", prefix="tier"
        )
    if data.publishers:
        charts["publishers"] = bar_chart(
            data.publishers.most_common(15),
            "Publishers cited in posted replies",
            prefix="publisher",
        )
    if data.evidence_per_reply:
        charts["evidence"] = bar_chart(
            [(str(n), c) for n, c in sorted(data.evidence_per_reply.items())],
            "Posted replies by number of evidence items",
            horizontal=False,
            prefix="evidence",
        )
    if data.abstain_reasons:
        charts["abstain"] = bar_chart(
            data.abstain_reasons.most_common(), "Abstentions by reason", prefix="abstain"
        )
    if data.latencies:
        charts["latency"] = histogram(data.latencies, "Decision latency", "seconds")
    if any(data.costs):
        charts["cost"] = histogram(data.costs, "LLM cost per decision", "USD")
    if data.guard_failures:
        charts["guard"] = bar_chart(
            data.guard_failures.most_common(), "Guard failures by rule", prefix="guard"
        )
    if data.agreement:
        charts["agreement"] = bar_chart(
            data.agreement.most_common(), "Moderator decisions", prefix="agreement"
        )
    if data.notes.ratings:
        charts["notes"] = bar_chart(
            data.notes.ratings.most_common(), "Submitted notes by rating", prefix="note_rating"
        )
    return charts


# --- rendering -------------------------------------------------------------------------------


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def render_chunks(data: ReportData) -> Iterator[str]:
    """The page in pieces, as Jinja renders it: written out as they come, the page of a long
    history is never held whole in memory."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,  # reasons, domains and requester names are data
        undefined=jinja2.StrictUndefined,
    )
    data.charts = _charts(data)
    stats: dict[str, Any] = {
        "latency_p50": _percentile(data.latencies, 0.5),
        "latency_p90": _percentile(data.latencies, 0.9),
        "cost_p50": _percentile(data.costs, 0.5),
        "cost_max": max(data.costs) if data.costs else 0.0,
        "volume": [(day.isoformat(), n) for day, n in data.volume],
    }
    env.globals["anchor"] = anchor
    env.filters["duration"] = duration
    return env.get_template("report.html").generate(data=data, stats=stats)


def render_html(data: ReportData) -> str:
    return "".join(render_chunks(data))


def write_report(db: Database, out_dir: Path, since: datetime | None = None) -> Path:
    """Write `index.html` into `out_dir` and return its path."""
    data = collect(db, since)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "index.html"
    with path.open("w", encoding="utf-8") as out:
        out.writelines(render_chunks(data))
    return path
