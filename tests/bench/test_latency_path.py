"""The latency bench's per-post timeline, read from the LLM calls in a check's trace."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bench.pipeline_latency import critical_path
from pipeline.records import LLMCall

START = datetime(2026, 1, 1, tzinfo=UTC)


def call(step: str, at: float, latency: float, *, ok: bool = True) -> LLMCall:
    return LLMCall(
        step=step, model="m", ok=ok, latency_s=latency, started_at=START + timedelta(seconds=at)
    )


def test_overlapping_calls_count_once_and_gaps_are_what_no_call_covered() -> None:
    calls = [
        call("analyze", 0.0, 1.5),
        call("evidence", 4.0, 1.5),
        call("evidence", 4.5, 1.5),  # beside the first: one block 4.0-6.0
        call("write", 6.0, 1.5),
    ]
    path = critical_path(calls, START, wall_s=8.0)
    assert path.llm_s == pytest.approx(1.5 + 2.0 + 1.5)
    assert path.other_s == pytest.approx(8.0 - 5.0)
    assert path.first_gap_s == pytest.approx(2.5)
    assert path.steps == "analyze 1.50 | ~2.50 | evidence+evidence 2.00 | write 1.50 | ~0.50"


def test_failed_calls_are_left_out_of_the_timeline() -> None:
    path = critical_path([call("analyze", 0.0, 1.0, ok=False)], START, wall_s=1.0)
    assert path.llm_s == 0.0
    assert path.steps == "~1.00"
