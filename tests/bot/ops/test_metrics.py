"""`/metrics`: open without login, Prometheus text format, values read from the database."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from alembic import command
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import func, select

from bot.config import load_settings
from bot.ops.metrics import guard_failures, registry_for, render
from bot.web.app import create_app
from pipeline.records import utcnow
from storage import metric_totals
from storage.db import Database, alembic_config
from storage.models import Cursor, DecisionRow, LLMCallRow, RateBudgetRow, Request, RequestState
from tests.bot.web.seed import Spec, seed, seed_bot_request_and_check_run

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(client: TestClient) -> Samples:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=")
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


@pytest.fixture
def client(db: Database) -> TestClient:
    settings = load_settings(database_url=db.url)
    # From loopback: without a metrics token, only this machine may read /metrics.
    return TestClient(create_app(settings, db, secret="s"), client=("127.0.0.1", 50000))


def test_metrics_need_no_login_and_match_the_rows(db: Database, client: TestClient) -> None:
    seed(db)
    samples = scrape(client)
    with db.session() as session:
        states = Counter(session.scalars(select(Request.state)))
        prompt, completion, cost = session.execute(
            select(
                func.sum(LLMCallRow.prompt_tokens),
                func.sum(LLMCallRow.completion_tokens),
                func.sum(LLMCallRow.cost_usd),
            )
        ).one()
        decisions = session.scalars(select(DecisionRow)).all()
        statuses = Counter(d.status for d in decisions)
        with_total = sum(1 for d in decisions if "total" in d.timings)
        problems = Counter(
            p.split(":")[0]
            for d in decisions
            for g in d.trace.get("guard", [])
            for p in g["problems"]
        )
    for state, count in states.items():
        assert samples[("factnote_requests", (("state", state),))] == count
    assert samples[("factnote_requests", (("state", "queued"),))] == 0
    assert samples[("factnote_review_queue_depth", ())] == states["awaiting_review"]
    for status, count in statuses.items():
        assert samples[("factnote_decisions_total", (("status", status),))] == count
    model = ("model", "fake-model")
    assert samples[("factnote_llm_tokens_total", (("kind", "prompt"), model))] == prompt
    assert samples[("factnote_llm_tokens_total", (("kind", "completion"), model))] == completion
    assert samples[("factnote_llm_cost_usd_total", (model,))] == pytest.approx(cost)
    assert samples[("factnote_stage_latency_seconds_count", (("stage", "total"),))] == with_total
    assert (
        samples[("factnote_stage_latency_seconds_bucket", (("le", "10.0"), ("stage", "total")))]
        == 0
    )  # seeded totals are 11.76 s
    assert (
        samples[("factnote_stage_latency_seconds_bucket", (("le", "30.0"), ("stage", "total")))]
        == with_total
    )
    for rule, count in problems.items():
        assert samples[("factnote_guard_failures_total", (("rule", rule),))] == count


def test_platform_errors_are_reported(db: Database, client: TestClient) -> None:
    world = seed(db, [Spec("posting", RequestState.POSTING)])
    now = utcnow()
    with db.transaction() as session:
        session.add(
            Cursor(adapter="x", last_poll_at=now, last_error="RateLimited: 429", last_error_at=now)
        )
        session.add(Cursor(adapter="local", last_poll_at=now))
        session.add(RateBudgetRow(adapter="x", endpoint="mentions", limit=450, remaining=12))
        request = session.get(Request, world.ids["posting"])
        assert request is not None
        request.post_attempts = 1
        request.last_error = "PlatformError: 503"
    samples = scrape(client)
    assert samples[("factnote_platform_poll_failing", (("adapter", "x"),))] == 1
    assert samples[("factnote_platform_poll_failing", (("adapter", "local"),))] == 0
    assert samples[("factnote_platform_last_error_timestamp_seconds", (("adapter", "x"),))] == (
        pytest.approx(now.timestamp())
    )
    assert samples[("factnote_platform_posting_errors", (("platform", "local"),))] == 1
    assert (
        samples[("factnote_platform_rate_remaining", (("adapter", "x"), ("endpoint", "mentions")))]
        == 12
    )


def test_metrics_see_rows_written_by_another_process(
    db: Database, client: TestClient, tmp_path: Path
) -> None:
    assert scrape(client)[("factnote_review_queue_depth", ())] == 0
    other = Database(db.url)  # another process's connection to the same database
    seed(other, [Spec("a", RequestState.AWAITING_REVIEW), Spec("b", RequestState.AWAITING_REVIEW)])
    other.dispose()
    assert scrape(client)[("factnote_review_queue_depth", ())] == 2


def test_check_runs_are_counted_apart_from_bot_requests(db: Database, client: TestClient) -> None:
    seed_bot_request_and_check_run(db)
    samples = scrape(client)
    assert samples[("factnote_cli_checks", ())] == 1
    assert samples[("factnote_requests", (("state", "dry_run"),))] == 1
    assert samples[("factnote_requests", (("state", "processing"),))] == 0
    assert samples[("factnote_decisions_total", (("status", "reply"),))] == 1
    assert ("factnote_decisions_total", (("status", "needs_llm"),)) not in samples


def test_totals_kept_as_decisions_are_written_match_a_count_of_the_rows(
    main_db: Database,
) -> None:
    """On SQLite and PostgreSQL (each its own upsert): the scrape reads running totals, and
    they agree with counting every decision's timings and trace."""
    seed(main_db)
    seed_bot_request_and_check_run(main_db)
    with main_db.session() as session:
        decisions = session.execute(
            select(DecisionRow.status, DecisionRow.timings, DecisionRow.trace)
            .join(Request, Request.id == DecisionRow.request_id)
            .where(Request.platform != "cli")
        ).all()
    registry = registry_for(main_db)
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(render(registry).decode())
        for s in family.samples
    }
    statuses = Counter(status for status, _, _ in decisions)
    for status, count in statuses.items():
        assert samples[("factnote_decisions_total", (("status", status),))] == count
    rules = guard_failures(iter(trace for _, _, trace in decisions))
    assert rules  # the seed has failed drafts
    for rule, count in rules.items():
        assert samples[("factnote_guard_failures_total", (("rule", rule),))] == count
    research = [t["research"] for _, t, _ in decisions if "research" in t]
    assert samples[("factnote_stage_latency_seconds_count", (("stage", "research"),))] == len(
        research
    )
    assert samples[("factnote_stage_latency_seconds_sum", (("stage", "research"),))] == (
        pytest.approx(sum(research))
    )


def test_the_migration_fills_the_totals_from_the_decisions_already_stored(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    db = Database(url)
    seed(db)
    seed_bot_request_and_check_run(db)
    with db.session() as session:
        live = metric_totals.read(session)
    db.dispose()
    command.downgrade(alembic_config(url), "0013")  # as a database from before the totals
    again = Database(url)  # migrates to head: the totals are counted from the rows
    with again.session() as session:
        backfilled = metric_totals.read(session)
    again.dispose()
    assert backfilled.keys() == live.keys()
    for name, labels in live.items():
        assert backfilled[name] == pytest.approx(labels)
