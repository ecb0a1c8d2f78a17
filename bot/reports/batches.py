"""The audit report over any length of history: requests are read a batch at a time (their
decisions without traces), each batch is summarised as the report always summarised its
requests, and the summaries are merged here. Memory holds one batch of rows and the running
figures, not every request with its decisions, evidence and traces at once (0.9 GB at
12,000 decisions before)."""

from __future__ import annotations

from collections import Counter
from datetime import date, timedelta
from typing import TYPE_CHECKING

from bot.reports.detail import Drill, ModeratorStats

if TYPE_CHECKING:
    from bot.reports.audit import ReportData

BATCH = 1000  # requests read and summarised at a time


def merge_drill(into: Drill, part: Drill) -> None:
    """Batches come in request order, so each key's ids stay in request order."""
    for key, ids in part.ids.items():
        for request_id in ids:
            into.add(key, request_id)


def merge_moderators(into: dict[str, ModeratorStats], part: list[ModeratorStats]) -> None:
    for stats in part:
        entry = into.setdefault(stats.actor, ModeratorStats(stats.actor))
        entry.actions.update(stats.actions)
        entry.requests |= stats.requests
        entry.review_s.extend(stats.review_s)


def filled_days(days: Counter[date]) -> list[tuple[date, int]]:
    """Requests per day from the first to the last; zero days are shown, so gaps are visible."""
    volume: list[tuple[date, int]] = []
    if days:
        day, end = min(days), max(days)
        while day <= end:
            volume.append((day, days.get(day, 0)))
            day += timedelta(days=1)
    return volume


class Merged:
    """The running figures across batches; `finish` gives the report's figures."""

    def __init__(self, first: ReportData) -> None:
        self.data = first
        self.days: Counter[date] = Counter(dict(first.volume))
        self.moderators: dict[str, ModeratorStats] = {}
        merge_moderators(self.moderators, first.moderators)

    def add(self, part: ReportData) -> None:
        data = self.data
        if part.first is not None:
            data.first = part.first if data.first is None else min(data.first, part.first)
        if part.last is not None:
            data.last = part.last if data.last is None else max(data.last, part.last)
        for name in (
            "total",
            "drafted",
            "total_cost",
            "prompt_tokens",
            "completion_tokens",
            "decisions",
        ):
            setattr(data, name, getattr(data, name) + getattr(part, name))
        for counter in (
            "states",
            "abstain_reasons",
            "skip_reasons",
            "modes",
            "verdicts",
            "tiers",
            "publishers",
            "evidence_per_reply",
            "guard_failures",
            "agreement",
            "reject_reasons",
            "transitions",
        ):
            getattr(data, counter).update(getattr(part, counter))
        for listed in ("latencies", "costs", "posted_replies", "rows"):
            getattr(data, listed).extend(getattr(part, listed))
        self.days.update(dict(part.volume))
        merge_moderators(self.moderators, part.moderators)
        merge_drill(data.drill, part.drill)

    def finish(self, outcome_groups: list[tuple[str, tuple[str, ...]]]) -> ReportData:
        data = self.data
        data.volume = filled_days(self.days)
        data.outcomes = [
            (label, sum(data.states[s] for s in states)) for label, states in outcome_groups
        ]
        data.posted = data.states["posted"]
        data.moderators = sorted(
            self.moderators.values(), key=lambda s: (-sum(s.actions.values()), s.actor)
        )
        data.posted_replies.sort(key=lambda p: (p.posted_at is None, p.posted_at, p.request_id))
        return data
