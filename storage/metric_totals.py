"""Running totals for `/metrics`, kept in the database as each decision is written.

Reading every decision's timings and trace at each scrape took seconds at 100,000 decisions
and grew with history. Instead, the transaction that writes a decision adds its figures here
(decisions by status, stage latency histograms, guard problems by rule, LLM calls, tokens and
cost), and a scrape reads these few rows. Rows are added to in key order, so two writers
never wait on each other's rows in opposite orders.

Decisions of `factnote check` runs (platform `cli`) count only towards the LLM totals, as
`/metrics` always counted them: an LLM call costs the same whoever made it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.dialect import insert_on_conflict
from storage.models import MetricTotal

# The platform of the request rows `factnote check` writes (storage.repositories).
CLI_PLATFORM = "cli"
# Stage latency buckets in seconds: LLM stages take seconds, research up to minutes.
LATENCY_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
SEP = "\t"  # between the parts of a label made of two values (stage and bound, model and ok)

Key = tuple[str, str]


def guard_rule(problem: str) -> str:
    """The stable rule name of a guard problem string (the part before the colon)."""
    return problem.split(":", 1)[0].strip() or "unknown"


def guard_rules(trace: Mapping[str, Any] | None) -> Counter[str]:
    """Guard problems by rule in one decision's trace (every failed draft counts)."""
    counts: Counter[str] = Counter()
    for report in (trace or {}).get("guard") or []:
        for problem in report.get("problems") or []:
            counts[guard_rule(str(problem))] += 1
    return counts


def decision_totals(
    *,
    platform: str,
    status: str,
    timings: Mapping[str, Any] | None,
    trace: Mapping[str, Any] | None,
    calls: Iterable[Mapping[str, Any]],
) -> defaultdict[Key, float]:
    """What one decision adds to the totals."""
    totals: defaultdict[Key, float] = defaultdict(float)
    for call in calls:
        model = str(call.get("model") or "")
        ok = "true" if call.get("ok", True) else "false"
        totals[("llm_calls", f"{model}{SEP}{ok}")] += 1
        totals[("llm_prompt", model)] += int(call.get("prompt_tokens") or 0)
        totals[("llm_completion", model)] += int(call.get("completion_tokens") or 0)
        totals[("llm_cost", model)] += float(call.get("cost_usd") or 0.0)
    if platform == CLI_PLATFORM:
        return totals
    totals[("decisions", status)] += 1
    for stage, seconds in (timings or {}).items():
        if not isinstance(seconds, int | float):
            continue
        totals[("stage_count", stage)] += 1
        totals[("stage_sum", stage)] += float(seconds)
        for bound in LATENCY_BUCKETS:
            if seconds <= bound:
                totals[("stage_bucket", f"{stage}{SEP}{bound!r}")] += 1
    for rule, n in guard_rules(trace).items():
        totals[("guard", rule)] += n
    return totals


def add(session: Session, totals: Mapping[Key, float]) -> None:
    """Add `totals` to the stored ones, in key order, in the caller's transaction."""
    rows = [
        {"name": name, "label": label, "value": float(value)}
        for (name, label), value in sorted(totals.items())
        if value
    ]
    if not rows:
        return
    for row in rows:
        stmt = insert_on_conflict(session, MetricTotal).values(**row)
        session.execute(
            stmt.on_conflict_do_update(
                index_elements=[MetricTotal.name, MetricTotal.label],
                set_={"value": MetricTotal.value + stmt.excluded.value},
            )
        )


def read(session: Session) -> dict[str, dict[str, float]]:
    """Every total: name -> label -> value."""
    found: dict[str, dict[str, float]] = {}
    for name, label, value in session.execute(
        select(MetricTotal.name, MetricTotal.label, MetricTotal.value)
    ):
        found.setdefault(name, {})[label] = float(value)
    return found
