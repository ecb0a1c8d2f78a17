"""What the latency bench says speculation cost: LLM calls and prompt tokens per post beyond
the one-worker run (which never speculates), read from the LLM server's log."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bench.pipeline_latency import PostRun, prompt_tokens, speculation_cost
from pipeline.records import Decision, DecisionStatus, Platform, RoundTrace, Trace
from testing.fakes.openai_server import RecordedRequest


def run(mode: str, requests: int, tokens: int, discarded: int = 0) -> PostRun:
    trace = Trace(rounds=[RoundTrace(round=1, queries=[], discarded_calls=discarded)])
    decision = Decision(
        status=DecisionStatus.REPLY, platform=Platform.X, as_of=datetime.now(UTC), trace=trace
    )
    return PostRun(
        post_id="p",
        scenario="high",
        mode=mode,
        wall_s=1.0,
        decision=decision,
        searches=0,
        fetches=0,
        skippable_s=0.0,
        requests=requests,
        request_prompt_tokens=tokens,
    )


def test_speculation_cost_is_what_each_post_sent_beyond_the_one_worker_run() -> None:
    conc = [run("concurrent", 4, 3000, discarded=2), run("concurrent", 2, 1000)]
    seq = [run("sequential", 2, 2000), run("sequential", 2, 1000)]
    cost = speculation_cost(conc, seq)
    assert cost["extra_llm_calls_mean"] == pytest.approx(1.0)
    assert cost["extra_llm_calls_max"] == 2.0
    assert cost["extra_prompt_tokens_mean"] == pytest.approx(500.0)
    assert cost["extra_prompt_tokens_max"] == 1000.0
    assert cost["discarded_calls_in_trace_mean"] == pytest.approx(1.0)


def test_prompt_tokens_are_counted_as_the_fake_server_reports_them() -> None:
    body = {
        "messages": [{"role": "system", "content": "x" * 40}, {"role": "user", "content": "y" * 9}]
    }
    asked = RecordedRequest(path="/v1/chat/completions", headers={}, body=body, key="evidence")
    assert prompt_tokens([asked, asked]) == 2 * (49 // 4)
