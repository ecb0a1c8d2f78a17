"""Prometheus metrics read from the database at scrape time: counts by state from the request
rows, and the decision and LLM figures from running totals kept as each decision is written
(`storage.metric_totals`), so a scrape costs the same at any size of history.

The bot's workers, the review app and cron runs are separate processes; counting in process
memory would give each its own partial numbers. A custom collector that reads the request and
decision rows on every scrape gives the same, complete figures whichever process serves
`/metrics`.

Request and decision figures are the bot's traffic: `factnote check` runs (platform `cli`) are
counted on their own (`factnote_cli_checks`). LLM tokens and cost count every call, since
each is spent the same whichever command made it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from bot.ops.summary import CLI_PLATFORM, poll_failing
from storage import metric_reads, metric_totals, review_queue
from storage.db import Database
from storage.metric_totals import LATENCY_BUCKETS, SEP
from storage.models import RequestState
from storage.requests import poll_cursors


def guard_failures(traces: Iterator[dict[str, Any]]) -> Counter[str]:
    """Guard problems by rule over decision traces (every failed draft counts)."""
    counts: Counter[str] = Counter()
    for trace in traces:
        counts.update(metric_totals.guard_rules(trace))
    return counts


class DatabaseCollector(Collector):
    """Reads current totals from the database on each `collect()`."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def collect(self) -> Iterator[Metric]:
        with self.db.session() as session:
            totals = metric_totals.read(session)
            yield from self._requests(session)
            yield from self._decisions(totals)
            yield from self._llm(totals)
            yield from self._platform(session)

    def _requests(self, session: Any) -> Iterator[Metric]:
        # From the state index, the check runs' few rows taken off: no scan of every request.
        states = review_queue.state_counts(session, CLI_PLATFORM)
        requests = GaugeMetricFamily(
            "factnote_requests", "Requests by current state (outcome).", labels=["state"]
        )
        for state in RequestState:
            requests.add_metric([state.value], float(states.get(state.value, 0)))
        yield requests
        queue = GaugeMetricFamily("factnote_review_queue_depth", "Drafts awaiting a moderator.")
        queue.add_metric([], float(states.get(RequestState.AWAITING_REVIEW.value, 0)))
        yield queue
        checks = GaugeMetricFamily(
            "factnote_cli_checks", "`factnote check` runs recorded (not bot requests)."
        )
        checks.add_metric([], float(metric_reads.requests_of(session, CLI_PLATFORM)))
        yield checks

    def _decisions(self, totals: dict[str, dict[str, float]]) -> Iterator[Metric]:
        decisions = CounterMetricFamily(
            "factnote_decisions", "Pipeline decisions by status.", labels=["status"]
        )
        for status, count in sorted(totals.get("decisions", {}).items()):
            decisions.add_metric([status], count)
        yield decisions

        latency = HistogramMetricFamily(
            "factnote_stage_latency_seconds",
            "Pipeline stage durations from decision timings.",
            labels=["stage"],
        )
        buckets = totals.get("stage_bucket", {})
        sums = totals.get("stage_sum", {})
        for stage, count in sorted(totals.get("stage_count", {}).items()):
            cumulative = [
                (repr(bound), buckets.get(f"{stage}{SEP}{bound!r}", 0.0))
                for bound in LATENCY_BUCKETS
            ]
            latency.add_metric([stage], [*cumulative, ("+Inf", count)], sums.get(stage, 0.0))
        yield latency

        guard = CounterMetricFamily(
            "factnote_guard_failures",
            "Guard problems on drafts, by rule (counted as each decision is written).",
            labels=["rule"],
        )
        for rule, count in sorted(totals.get("guard", {}).items()):
            guard.add_metric([rule], count)
        yield guard

    def _llm(self, totals: dict[str, dict[str, float]]) -> Iterator[Metric]:
        tokens = CounterMetricFamily(
            "factnote_llm_tokens", "LLM tokens used.", labels=["model", "kind"]
        )
        cost = CounterMetricFamily("factnote_llm_cost_usd", "LLM cost in USD.", labels=["model"])
        calls = CounterMetricFamily(
            "factnote_llm_calls", "LLM calls by outcome.", labels=["model", "ok"]
        )
        for label, count in sorted(totals.get("llm_calls", {}).items()):
            model, _, ok = label.partition(SEP)
            calls.add_metric([model, ok], count)
        prompt = totals.get("llm_prompt", {})
        completion = totals.get("llm_completion", {})
        for model, usd in sorted(totals.get("llm_cost", {}).items()):
            tokens.add_metric([model, "prompt"], prompt.get(model, 0.0))
            tokens.add_metric([model, "completion"], completion.get(model, 0.0))
            cost.add_metric([model], usd)
        yield tokens
        yield cost
        yield calls

    def _platform(self, session: Any) -> Iterator[Metric]:
        failing = GaugeMetricFamily(
            "factnote_platform_poll_failing",
            "1 when the adapter's last poll failed.",
            labels=["adapter"],
        )
        last_error = GaugeMetricFamily(
            "factnote_platform_last_error_timestamp_seconds",
            "When the adapter's last poll error happened (Unix time).",
            labels=["adapter"],
        )
        for row in poll_cursors(session):
            failing.add_metric([row.adapter], 1.0 if poll_failing(row) else 0.0)
            if row.last_error_at is not None:
                last_error.add_metric([row.adapter], row.last_error_at.timestamp())
        yield failing
        yield last_error

        posting = GaugeMetricFamily(
            "factnote_platform_posting_errors",
            "Requests whose posting met a platform error (rate limit, refusal, outage).",
            labels=["platform"],
        )
        for platform, count in metric_reads.posting_errors(session):
            posting.add_metric([platform], float(count))
        yield posting

        remaining = GaugeMetricFamily(
            "factnote_platform_rate_remaining",
            "Calls left in the platform's current rate-limit window.",
            labels=["adapter", "endpoint"],
        )
        for budget in metric_reads.rate_budgets(session):
            if budget.remaining is not None:
                remaining.add_metric([budget.adapter, budget.endpoint], float(budget.remaining))
        yield remaining


def registry_for(db: Database) -> CollectorRegistry:
    """A registry holding only the database collector (not the process-global one)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(DatabaseCollector(db))
    return registry


def render(registry: CollectorRegistry) -> bytes:
    return generate_latest(registry)
