"""What the review app's item page reads from the database: one request with its whole trace
and its history. Read-only; the moderator actions are in `bot.moderation.actions`, and the queue and
the decisions log are read in SQL by `storage.review_queue` and `storage.decision_log`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot.moderation import actions as review
from bot.requests.lifecycle import Event
from bot.requests.lifecycle import history as event_log
from bot.requests.to_pipeline import reply_platform
from pipeline.records import GuardReport, Passage, Platform
from pipeline.web.urls import canonical_url
from storage import review_item
from storage.db import Session
from storage.models import DecisionRow, DocumentRow, EvidenceRow, Request, ReviewAction
from storage.repositories import snapshot_for

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
    decision = review_item.latest_decision(session, request_id)
    count = review_item.decision_count(session, request_id)
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
        found = review_item.snapshot_by_hash(session, evidence.content_hash)
    return found


@dataclass(frozen=True)
class HistoryEntry:
    """One line of an item's history: a state change from the request's event log
    (`bot.requests.lifecycle`: from, to, reason and actor) or a moderator's action
    (`bot.moderation.actions`)."""

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
