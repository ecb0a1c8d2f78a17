"""`factnote claims sync` (issue 29, item 5): fact-checks pulled from a Fact Check Tools API
on loopback (`testing.fakes.factcheck_api`, shaped after the API reference) and from a
Data Commons-style ClaimReview feed dump (tests/fixtures/claims/datacommons_feed.json, its
shape cited in the README there) into a real claim index on a real SQLite database."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger
from typer.testing import CliRunner

from bot.commands.claims import app
from bot.config import ClaimSyncConfig, Settings
from bot.ops.claim_sync import JOB_ID, ClaimSync, schedule_claim_sync
from pipeline.claims.index import ClaimIndex
from pipeline.config import RelevanceConfig
from pipeline.relevance.scoring import get_embedder
from storage.claim_sync import sync_state
from storage.db import Database
from testing import indexes
from testing.fakes.factcheck_api import FakeFactCheckAPI
from testing.fakes.http_server import LocalHTTPServer, Route

FEED = Path(__file__).resolve().parents[2] / "fixtures" / "claims" / "datacommons_feed.json"
KEY = "test-key-0123456789"


def _day(days_ago: int) -> str:
    return (datetime.now(UTC) - timedelta(days=days_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def api_claim(n: int, *, days_ago: int = 1, rating: str = "False", url: str | None = None) -> dict:
    """One Claim as the API returns it (reference: claims resource, Claim and ClaimReview)."""
    return {
        "text": f"Vaccine batch {n} contains microchips that track people",
        "claimant": "Social media posts",
        "claimDate": _day(days_ago + 1),
        "claimReview": [
            {
                "publisher": {"name": "Checkers", "site": "checkers.example"},
                "url": f"https://checkers.example/fact-check/vaccine-{n}" if url is None else url,
                "title": f"No, batch {n} holds no microchips",
                "reviewDate": _day(days_ago),
                "textualRating": rating,
                "languageCode": "en",
            }
        ],
    }


@pytest.fixture
def api() -> Iterator[FakeFactCheckAPI]:
    claims = [api_claim(n) for n in range(1, 6)]
    claims.append(api_claim(6, url=""))  # a review without its URL: skipped, with the reason
    claims.append(api_claim(7, days_ago=90))  # older than the first sync's window
    with FakeFactCheckAPI(KEY, claims) as server:
        yield server


@pytest.fixture
def index(db: Database) -> Iterator[ClaimIndex]:
    with indexes.claim_index(db.engine, get_embedder(RelevanceConfig())) as claim_index:
        yield claim_index


def settings_for(db: Database, **sync: Any) -> Settings:
    return Settings(database_url=db.url, claim_sync=ClaimSyncConfig(**sync))


def api_settings(db: Database, api: FakeFactCheckAPI, **extra: Any) -> Settings:
    sync = {"api_key": KEY, "api_url": api.url, "queries": ["vaccine microchips"], "page_size": 2}
    return settings_for(db, **{**sync, **extra})


def run_sync(settings: Settings, db: Database, index: ClaimIndex) -> list[Any]:
    sync = ClaimSync(settings, db, index)
    try:
        return sync.run()
    finally:
        sync.close()


def test_api_pages_are_imported_once_and_a_changed_review_is_updated(
    main_db: Database, api: FakeFactCheckAPI
) -> None:
    db = main_db  # SQLite, and PostgreSQL with -m postgres
    index = indexes.claim_index(db.engine, get_embedder(RelevanceConfig()))
    settings = api_settings(db, api)
    [first] = run_sync(settings, db, index)
    assert first.ok, first.failure
    assert (first.fetched, first.new, first.updated, first.unchanged) == (6, 5, 0, 0)
    assert first.skipped == ["page 3: claims[1].claimReview[0]: no review URL"]
    # Three pages of two, the later ones asked for with the previous page's token.
    assert [s.get("pageToken") is not None for s in api.searches] == [False, True, True]
    assert {s["maxAgeDays"] for s in api.searches} == {"30"}
    assert len(index) == 5

    api.searches.clear()
    [again] = run_sync(settings, db, index)
    assert (again.new, again.updated, again.unchanged) == (0, 0, 5)
    # Incremental: only what is newer than the last complete sync (plus a day's overlap).
    assert {s["maxAgeDays"] for s in api.searches} == {"2"}

    api.claims[2]["claimReview"][0]["textualRating"] = "Mostly false"
    [changed] = run_sync(settings, db, index)
    assert (changed.new, changed.updated, changed.unchanged) == (0, 1, 4)
    assert len(index) == 5
    [match] = [
        m
        for m in index.match("Vaccine batch 3 contains microchips that track people")
        if m.record.review_url.endswith("vaccine-3")
    ]
    assert match.record.rating_text == "Mostly false"


def test_the_key_travels_in_a_header_and_never_in_a_url_or_a_message(
    db: Database, index: ClaimIndex, api: FakeFactCheckAPI
) -> None:
    [report] = run_sync(api_settings(db, api), db, index)
    assert report.ok and api.requests
    assert all(KEY not in r.path for r in api.requests)
    assert all(r.headers.get("X-Goog-Api-Key") == KEY for r in api.requests)

    wrong = api_settings(db, api, api_key="not-the-key")
    [refused] = run_sync(wrong, db, index)
    assert refused.failure == (
        "the Fact Check API answered HTTP 400 (INVALID_ARGUMENT: API key not valid. "
        "Please pass a valid API key.)"
    )
    assert "not-the-key" not in refused.line()
    [keyless] = run_sync(settings_for(db, api_url=api.url, queries=["x"]), db, index)
    assert keyless.failure is not None and "FACTNOTE_FACTCHECK_API_KEY" in keyless.failure


def test_a_failing_source_is_a_failure_its_cursor_stays_and_the_others_go_on(
    db: Database, index: ClaimIndex, api: FakeFactCheckAPI
) -> None:
    settings = api_settings(db, api, feeds=[str(FEED)])
    api.fail_next = [503]
    failed, feed = run_sync(settings, db, index)
    assert failed.failure == (
        "the Fact Check API answered HTTP 503 (UNAVAILABLE: The service is currently unavailable.)"
    )
    assert (failed.new, failed.fetched) == (0, 0)
    assert feed.ok and feed.new == 3
    state = sync_state(db, failed.source)
    assert state.synced_from is None and state.last_error == failed.failure

    api.searches.clear()
    recovered, _ = run_sync(settings, db, index)
    assert recovered.ok and recovered.new == 5
    assert {s["maxAgeDays"] for s in api.searches} == {"30"}  # the same window as the failed run


def test_a_timeout_is_a_failure_of_its_source(db: Database, index: ClaimIndex) -> None:
    with LocalHTTPServer() as slow:
        slow.add("/v1alpha1/claims:search", Route(body="{}", delay_s=2.0))
        settings = settings_for(
            db, api_key=KEY, api_url=slow.url("/v1alpha1/claims:search"), queries=["x"]
        )
        with httpx.Client(timeout=0.3) as client:
            sync = ClaimSync(settings, db, index, client=client)
            [report] = sync.run()
    assert report.failure == "the Fact Check API timed out (ReadTimeout)"


def test_a_feed_dump_is_imported_once_with_its_malformed_review_skipped(
    db: Database, index: ClaimIndex, tmp_path: Path
) -> None:
    dump = tmp_path / "feed.json"
    dump.write_bytes(FEED.read_bytes())
    settings = settings_for(db, feeds=[str(dump)])
    [first] = run_sync(settings, db, index)
    assert (first.fetched, first.new, first.updated) == (4, 3, 0)
    assert first.skipped == ["ClaimReview 4: no review URL"]
    assert first.newest_review == datetime(2026, 11, 22, tzinfo=UTC)

    [again] = run_sync(settings, db, index)
    assert (again.fetched, again.new, again.note) == (0, 0, "dump unchanged since the last sync")

    feed = json.loads(dump.read_text())
    feed["dataFeedElement"][0]["item"][0]["reviewRating"]["alternateName"] = "Pants on fire"
    dump.write_text(json.dumps(feed))
    [changed] = run_sync(settings, db, index)
    assert (changed.new, changed.updated, changed.unchanged) == (0, 1, 2)


def test_an_unreadable_feed_is_a_failure(db: Database, index: ClaimIndex, tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{not json")
    settings = settings_for(
        db, feeds=[str(tmp_path / "missing.json"), str(tmp_path / "broken.json")]
    )
    missing, broken = run_sync(settings, db, index)
    assert missing.failure == "no such file"
    assert broken.failure is not None and broken.failure.startswith("not a ClaimReview feed")


def test_the_command_prints_a_summary_per_source(
    db: Database, api: FakeFactCheckAPI, tmp_path: Path
) -> None:
    settings = api_settings(db, api, feeds=[str(FEED), str(tmp_path / "missing.json")])
    result = CliRunner().invoke(app, ["sync"], obj=settings)
    assert result.exit_code == 1  # one source failed
    out = result.stdout
    assert "factcheck-api:query=vaccine microchips" in out and "feed:" in out
    skipped = "page 3: claims[1].claimReview[0]: no review URL"
    assert f"skipped: factcheck-api:query=vaccine microchips: {skipped}" in out
    assert "claim index holds 8 review(s)" in out
    assert f"factnote: error: feed:{tmp_path / 'missing.json'}: no such file" in result.stderr
    assert KEY not in result.output

    again = CliRunner().invoke(app, ["sync", "--source", "factcheck-api", "--json"], obj=settings)
    assert again.exit_code == 0, again.output
    [row] = json.loads(again.stdout)
    assert (row["new"], row["unchanged"], len(row["skipped"])) == (0, 5, 1)
    assert api.searches[-1]["maxAgeDays"] == "2"

    full = CliRunner().invoke(app, ["sync", "--full", "--json"], obj=settings)
    rows = {r["source"]: r for r in json.loads(full.stdout)}
    assert api.searches[-1]["maxAgeDays"] == "30"
    assert rows[f"feed:{FEED}"]["unchanged"] == 3  # read again, not skipped as the same dump


def test_the_command_refuses_when_no_source_is_configured(db: Database) -> None:
    result = CliRunner().invoke(app, ["sync"], obj=settings_for(db))
    assert result.exit_code == 1
    assert "no fact-check sources configured" in result.stderr


def test_the_leader_job_is_scheduled_only_with_sources_and_an_interval(
    db: Database, index: ClaimIndex
) -> None:
    scheduler = BackgroundScheduler(timezone="UTC")
    feeds = {"feeds": [str(FEED)]}
    assert schedule_claim_sync(scheduler, settings_for(db, **feeds), db, index) is None
    assert schedule_claim_sync(scheduler, settings_for(db, interval_s=600), db, index) is None
    assert (
        schedule_claim_sync(scheduler, settings_for(db, interval_s=600, **feeds), db, None) is None
    )
    ran: list[str] = []

    def wrap(fn: Any) -> Any:
        def led() -> None:
            ran.append("led")
            fn()

        return led

    job = schedule_claim_sync(
        scheduler, settings_for(db, interval_s=600, **feeds), db, index, wrap=wrap
    )
    assert job is not None and scheduler.get_job(JOB_ID) is job
    assert isinstance(job.trigger, IntervalTrigger)
    assert job.trigger.interval == timedelta(seconds=600)
    job.func()  # what the scheduler runs: the leader check, then the sync
    assert ran == ["led"] and len(index) == 3


def test_a_feed_dump_is_read_from_a_url_and_an_http_error_is_a_failure(
    db: Database, index: ClaimIndex
) -> None:
    with LocalHTTPServer() as server:
        server.add("/feed.json", Route(body=FEED.read_bytes(), content_type="application/json"))
        server.add("/gone.json", Route(status=500, body=b"oops", content_type="text/plain"))
        settings = settings_for(db, feeds=[server.url("/feed.json"), server.url("/gone.json")])
        feed, gone = run_sync(settings, db, index)
        again, _ = run_sync(settings, db, index)
    assert (feed.new, len(feed.skipped)) == (3, 1)
    assert gone.failure == "HTTP 500"
    assert again.note == "dump unchanged since the last sync"
