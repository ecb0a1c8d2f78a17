"""The runtime benchmarks (bench/runtime_throughput.py, bench/queue_throughput.py) run in a
tiny configuration and measure real work: every summons taken in and triaged into the queue,
every no-op request claimed, decided and posted once, worker processes that drain a batch.
No timing is asserted."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, text

from bench import queue_throughput, runtime_throughput
from pipeline.records import Post
from testing.fakes.openai_server import FakeLLM
from testing.scenarios import script_happy_path


def test_runtime_benchmark_queues_every_summons_and_drains_them() -> None:
    # The bench's summons carry fixed dates: it must measure triage and the worker on real
    # work, not on requests the age limit skipped (which once left it nothing to drain).
    numbers = runtime_throughput.run(quick=True, postgres=False)
    assert numbers["sqlite_intake_summons"] == 200
    assert numbers["sqlite_drain_requests"] == 5  # six summons, one processed as the warm-up
    assert numbers["sqlite_drain_llm_calls"] > 0
    # The no-op run refuses to report unless each request was posted once to the outbox.
    assert numbers["sqlite_noop_requests"] == 20
    assert numbers["sqlite_noop_per_s"] > 0
    # Three commits per request (claim; decision with the intent to post and its attempt's
    # claim; receipt), plus the batches' shares of intake and triage: the posting steps that
    # need not be separate commits are merged (issue 12).
    assert 3 <= numbers["sqlite_noop_commits_per_request"] <= 3.25
    # Connections taken per request: the same three transactions, and no session of its own
    # for the live mode, the repeat check or the kill switch (each read in the transaction
    # that needs it; six per request before, issue 12).
    assert numbers["sqlite_noop_checkouts_per_request"] <= 3.5
    assert numbers["sqlite_intake_and_triage_statements_per_summons"] < 0.1


def test_noop_checker_replies_distinctly_per_post() -> None:
    checker = runtime_throughput.NoopChecker()
    posts = [
        Post(id=str(i), author="a", text="t", created_at=runtime_throughput.OLD) for i in range(2)
    ]
    first, second = (checker.check(p) for p in posts)
    assert first.reply != second.reply
    assert checker.calls == 2


def _count(url: str, query: str) -> int:
    engine = create_engine(url)
    with engine.connect() as conn:
        found = int(conn.execute(text(query)).scalar_one())
    engine.dispose()
    return found


@pytest.mark.postgres
def test_postgres_intake_defers_a_job_per_queued_request(postgres_url: str) -> None:
    numbers = runtime_throughput.intake(30, postgres_url)
    assert numbers["intake_summons"] == 30
    assert _count(postgres_url, "SELECT count(*) FROM procrastinate_jobs") == 30


@pytest.mark.postgres
def test_postgres_noop_run_posts_every_request_through_procrastinate(postgres_url: str) -> None:
    numbers = runtime_throughput.noop(12, postgres_url)
    assert numbers["noop_requests"] == 12
    claimed = _count(postgres_url, "SELECT count(*) FROM request_events WHERE reason = 'claimed'")
    assert claimed == 12 + 1  # each request claimed once, by a job (one is the warm-up)


@pytest.mark.postgres
@pytest.mark.slow
def test_queue_benchmark_drains_a_batch_on_a_worker_process(postgres_url: str) -> None:
    with FakeLLM(delay_s=0.0) as fake:
        script_happy_path(fake)
        rate = queue_throughput.drain_with(
            postgres_url, queue_throughput.Setup(1, 1), fake, count=2
        )
        assert fake.requests  # the worker process ran the pipeline against the fake LLM
    assert rate > 0


@pytest.mark.postgres
def test_the_postgres_noop_profile_sees_the_jobs_in_their_threads(postgres_url: str) -> None:
    # cProfile sees only the thread it is enabled in: the jobs run in Procrastinate's worker
    # threads, and a profile of the main thread alone would show the event loop waiting.
    found = runtime_throughput.Profiles()
    numbers = runtime_throughput.noop(3, postgres_url, found)
    assert numbers["noop_requests"] == 3
    assert found.job_count == 3  # the measured round's jobs only, not the warm-up's
    report = found.report(top=200)
    assert "bot/ops/queue.py" in report and "(process_request)" in report
    assert "jobs: 3, job-thread CPU" in report
