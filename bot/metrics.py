"""Prometheus metrics read from the database at scrape time.

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
from sqlalchemy import func, select

from bot.summary import CLI_PLATFORM, poll_failing
from storage.db import Database
from storage.models import (
    Cursor,
    DecisionRow,
    LLMCallRow,
    RateBudgetRow,
    Request,
    RequestState,
)

# Stage latency buckets in seconds: LLM stages take seconds, research up to minutes.
LATENCY_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)


def guard_rule(problem: str) -> str:
    """The stable rule name of a guard problem string (the part before the colon)."""
    return problem.split(":", 1)[0].strip() or "unknown"


def guard_failures(traces: Iterator[dict[str, Any]]) -> Counter[str]:
    """Guard problems by rule over decision traces (every failed draft counts)."""
    counts: Counter[str] = Counter()
    for trace in traces:
        for report in (trace or {}).get("guard") or []:
            for problem in report.get("problems") or []:
                counts[guard_rule(str(problem))] += 1
    return counts


def _histogram(values: list[float]) -> tuple[list[tuple[str, float]], float]:
    buckets: list[tuple[str, float]] = []
    for bound in LATENCY_BUCKETS:
        buckets.append((repr(bound), float(sum(1 for v in values if v <= bound))))
    buckets.append(("+Inf", float(len(values))))
    return buckets, float(sum(values))


class DatabaseCollector(Collector):
    """Reads current totals from the database on each `collect()`."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def collect(self) -> Iterator[Metric]:
        with self.db.session() as session:
            yield from self._requests(session)
            yield from self._decisions(session)
            yield from self._llm(session)
            yield from self._platform(session)

    def _requests(self, session: Any) -> Iterator[Metric]:
        states = dict(
            session.execute(
                select(Request.state, func.count())
                .where(Request.platform != CLI_PLATFORM)
                .group_by(Request.state)
            ).all()
        )
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
        checks.add_metric(
            [],
            float(
                session.scalar(
                    select(func.count())
                    .select_from(Request)
                    .where(Request.platform == CLI_PLATFORM)
                )
                or 0
            ),
        )
        yield checks

    def _decisions(self, session: Any) -> Iterator[Metric]:
        decisions = CounterMetricFamily(
            "factnote_decisions", "Pipeline decisions by status.", labels=["status"]
        )
        for status, count in session.execute(
            select(DecisionRow.status, func.count())
            .join(Request, DecisionRow.request_id == Request.id)
            .where(Request.platform != CLI_PLATFORM)
            .group_by(DecisionRow.status)
        ):
            decisions.add_metric([status], float(count))
        yield decisions

        timings: dict[str, list[float]] = {}
        traces: list[dict[str, Any]] = []
        for timing, trace in session.execute(
            select(DecisionRow.timings, DecisionRow.trace)
            .join(Request, DecisionRow.request_id == Request.id)
            .where(Request.platform != CLI_PLATFORM)
        ):
            for stage, seconds in (timing or {}).items():
                if isinstance(seconds, int | float):
                    timings.setdefault(stage, []).append(float(seconds))
            traces.append(trace or {})
        latency = HistogramMetricFamily(
            "factnote_stage_latency_seconds",
            "Pipeline stage durations from decision timings.",
            labels=["stage"],
        )
        for stage in sorted(timings):
            buckets, total = _histogram(timings[stage])
            latency.add_metric([stage], buckets, total)
        yield latency

        guard = CounterMetricFamily(
            "factnote_guard_failures",
            "Guard problems on drafts, by rule (from decision traces).",
            labels=["rule"],
        )
        for rule, count in sorted(guard_failures(iter(traces)).items()):
            guard.add_metric([rule], float(count))
        yield guard

    def _llm(self, session: Any) -> Iterator[Metric]:
        tokens = CounterMetricFamily(
            "factnote_llm_tokens", "LLM tokens used.", labels=["model", "kind"]
        )
        cost = CounterMetricFamily("factnote_llm_cost_usd", "LLM cost in USD.", labels=["model"])
        calls = CounterMetricFamily(
            "factnote_llm_calls", "LLM calls by outcome.", labels=["model", "ok"]
        )
        per_model = session.execute(
            select(
                LLMCallRow.model,
                LLMCallRow.ok,
                func.count(),
                func.coalesce(func.sum(LLMCallRow.prompt_tokens), 0),
                func.coalesce(func.sum(LLMCallRow.completion_tokens), 0),
                func.coalesce(func.sum(LLMCallRow.cost_usd), 0.0),
            ).group_by(LLMCallRow.model, LLMCallRow.ok)
        ).all()
        prompt: Counter[str] = Counter()
        completion: Counter[str] = Counter()
        spent: dict[str, float] = {}
        for model, ok, count, p_tokens, c_tokens, usd in per_model:
            calls.add_metric([model, "true" if ok else "false"], float(count))
            prompt[model] += int(p_tokens)
            completion[model] += int(c_tokens)
            spent[model] = spent.get(model, 0.0) + float(usd)
        for model in sorted(spent):
            tokens.add_metric([model, "prompt"], float(prompt[model]))
            tokens.add_metric([model, "completion"], float(completion[model]))
            cost.add_metric([model], spent[model])
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
        for row in session.scalars(select(Cursor).order_by(Cursor.adapter)):
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
        for platform, count in session.execute(
            select(Request.platform, func.count())
            .where(Request.post_attempts > 0, Request.last_error.is_not(None))
            .group_by(Request.platform)
        ):
            posting.add_metric([platform], float(count))
        yield posting

        remaining = GaugeMetricFamily(
            "factnote_platform_rate_remaining",
            "Calls left in the platform's current rate-limit window.",
            labels=["adapter", "endpoint"],
        )
        for row in session.scalars(select(RateBudgetRow)):
            if row.remaining is not None:
                remaining.add_metric([row.adapter, row.endpoint], float(row.remaining))
        yield remaining


def registry_for(db: Database) -> CollectorRegistry:
    """A registry holding only the database collector (not the process-global one)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(DatabaseCollector(db))
    return registry


def render(registry: CollectorRegistry) -> bytes:
    return generate_latest(registry)
