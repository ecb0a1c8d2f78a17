"""The x_notes adapter drives a real `tweepy.Client` (OAuth 1.0a user context) against a loopback
fake of the four Community Notes endpoints (testing/fakes/x_notes_api.py; its shapes and their
sources: tests/fixtures/x_notes/SOURCES.md)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from adapters.base import PlatformError, RateLimited, Summons, TargetStatus
from adapters.x.client import XCredentials
from adapters.x_notes.adapter import NotesOptions, XNotesAdapter
from adapters.x_notes.budget import RequestBudget
from adapters.x_notes.client import NotesClient
from adapters.x_notes.errors import NotEligible
from adapters.x_notes.note_store import text_hash
from bot.notes.store import SqlNoteStore
from storage.db import Database
from testing.fakes.x_notes_api import Failure, FakeNotesApi, post
from tests.adapters.x_notes.note_store_memory import prepare_note

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
CREDS = XCredentials("bearer", "ck", "cs", "at", "ats", "1", "factnote")
NOTE = "Lemon water does not kill flu viruses: https://ministry.example/flu/lemon"


class Clock:
    def __init__(self, now: datetime = NOW) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def client(api: FakeNotesApi, clock: Clock, limit: int = 90, **kw: Any) -> NotesClient:
    budget = RequestBudget(limit, timedelta(minutes=15), clock)
    return NotesClient(CREDS, budget, base_url=api.base_url, **kw)


def adapter(api: FakeNotesApi, db: Database, clock: Clock, **options: Any) -> XNotesAdapter:
    return XNotesAdapter(client(api, clock), SqlNoteStore(db), NotesOptions(**options), clock=clock)


def prepare(db: Database, post_id: str, *, at: datetime = NOW) -> None:
    prepare_note(db, post_id, NOTE, at=at)


@pytest.fixture
def notes(feed: FakeNotesApi, db: Database, clock: Clock) -> XNotesAdapter:
    """The adapter with a note for post 11 prepared in the store, as the bot leaves it."""
    prepare(db, "11")
    return adapter(feed, db, clock)


def summons(post_id: str) -> Summons:
    return Summons(platform="x_notes", id=post_id, author="a", text="", created_at=NOW)


@pytest.fixture
def feed() -> Iterator[FakeNotesApi]:
    pages = [
        [
            post("10", "old claim", NOW - timedelta(hours=30)),
            post("11", "fresh claim", NOW - timedelta(hours=1)),
            post("12", "video only", NOW - timedelta(hours=2), media=["video/hls"]),
        ],
        [
            post("11", "fresh claim", NOW - timedelta(hours=1)),  # repeated on a later page
            post("13", "older but asked for", NOW - timedelta(hours=5), note_requests=3),
            post("14", "photo claim", NOW - timedelta(minutes=30), media=["photo"]),
            post("15", "unreadable", NOW - timedelta(hours=1), media=["photo", "unknown"]),
        ],
    ]
    with FakeNotesApi(pages) as api:
        yield api


# --- The feed ---------------------------------------------------------------------------------


def test_feed_pages_drop_repeats_skip_by_triage_and_rank_note_requests_then_freshness(
    feed: FakeNotesApi, db: Database, clock: Clock
) -> None:
    result = adapter(feed, db, clock, max_pages=5).fetch_summons(None)

    skipped = {
        s.id: s.target_reason for s in result.summons if s.target_status is TargetStatus.UNAVAILABLE
    }
    chosen = [s.id for s in result.summons if s.target_status is TargetStatus.OK]
    assert chosen == ["13", "14", "11"]
    assert skipped["10"].startswith("notes triage: older than 24 h")
    assert skipped["12"] == (
        "notes triage: video-only post with no video file to read "
        "(media 7_120: no MP4 file (application/x-mpegURL))"
    )
    assert skipped["15"] == "notes triage: media we cannot read"
    assert len(result.summons) == 6  # post 11 once
    assert result.cursor is None  # the feed is not in time order: no since-id
    assert feed.calls("GET /2/notes/search/posts_eligible_for_notes") == 2


def test_feed_summons_carry_the_post_as_target_and_the_offer_time_as_their_own(
    feed: FakeNotesApi, db: Database, clock: Clock
) -> None:
    result = adapter(feed, db, clock, max_pages=1).fetch_summons(None)

    fresh = next(s for s in result.summons if s.id == "11")
    assert fresh.created_at == NOW
    assert fresh.target is not None and fresh.target.text == "fresh claim"
    assert fresh.target.created_at == NOW - timedelta(hours=1)
    assert "test_mode=True" in fresh.notes


def test_at_most_max_drafts_per_poll_are_handed_on_and_the_rest_stay_unseen(
    feed: FakeNotesApi, db: Database, clock: Clock
) -> None:
    result = adapter(feed, db, clock, max_pages=5, max_drafts_per_poll=1).fetch_summons(None)

    assert [s.id for s in result.summons if s.target_status is TargetStatus.OK] == ["13"]
    assert {"11", "14"}.isdisjoint({s.id for s in result.summons})


# Spec 2.167's Problem names no rate-limit type; X's 429 is 2.159's `about:blank` problem.
@pytest.mark.off_spec("spec 2.167 has no problem type for a 429")
def test_a_429_on_the_feed_is_rate_limited_until_xs_reset(
    feed: FakeNotesApi, db: Database, clock: Clock
) -> None:
    reset = int((NOW + timedelta(minutes=7)).timestamp())
    feed.fail(
        "GET /2/notes/search/posts_eligible_for_notes",
        Failure(429, {"title": "Too Many Requests"}, {"x-rate-limit-reset": str(reset)}),
    )
    with pytest.raises(RateLimited) as caught:
        adapter(feed, db, clock).fetch_summons(None)
    assert caught.value.reset_at == NOW + timedelta(minutes=7)


def test_a_500_is_a_retryable_error(feed: FakeNotesApi, db: Database, clock: Clock) -> None:
    feed.fail("GET /2/notes/search/posts_eligible_for_notes", Failure(500, {"title": "oops"}))
    with pytest.raises(PlatformError) as caught:
        adapter(feed, db, clock).fetch_summons(None)
    assert caught.value.retryable and caught.value.status == 500


def test_the_request_budget_refuses_the_91st_call_in_15_minutes_before_it_reaches_x(
    feed: FakeNotesApi, clock: Clock
) -> None:
    notes = client(feed, clock)
    for _ in range(90):
        notes.evaluate("11", NOTE)
    with pytest.raises(RateLimited) as caught:
        notes.evaluate("11", NOTE)
    assert caught.value.reset_at == NOW + timedelta(minutes=15)
    assert feed.calls("POST /2/notes/evaluate") == 90
    clock.now += timedelta(minutes=15)
    notes.evaluate("11", NOTE)
    assert feed.calls("POST /2/notes/evaluate") == 91


def test_non_test_calls_are_refused_until_the_writer_is_admitted(
    feed: FakeNotesApi, db: Database, clock: Clock
) -> None:
    with pytest.raises(PlatformError) as caught:
        adapter(feed, db, clock, test_mode=False).fetch_summons(None)
    assert caught.value.status == 403
    feed.admitted = True
    assert adapter(feed, db, clock, test_mode=False).fetch_summons(None).summons


# --- Evaluate -----------------------------------------------------------------------------


def test_evaluate_sends_exactly_post_id_and_note_text_on_the_configured_path(
    feed: FakeNotesApi, clock: Clock
) -> None:
    feed.scores["11"] = 1.25
    assert client(feed, clock).evaluate("11", NOTE) == 1.25
    assert client(feed, clock, evaluate_path="/2/evaluate_note").evaluate("11", NOTE) == 1.25
    assert feed.evaluated == [{"note_text": NOTE, "post_id": "11"}] * 2
    assert feed.calls("POST /2/evaluate_note") == 1


def test_an_evaluate_404_is_an_error_never_not_eligible(feed: FakeNotesApi, clock: Clock) -> None:
    with pytest.raises(PlatformError) as caught:
        client(feed, clock).evaluate("999", NOTE)
    assert not isinstance(caught.value, NotEligible)
    assert caught.value.status == 404 and not caught.value.retryable
    assert feed.calls("POST /2/notes/evaluate") == feed.calls("POST /2/evaluate_note") == 1


# --- Submitting ---------------------------------------------------------------------------


def test_a_note_above_the_floor_is_submitted_once_with_its_prepared_tags_in_test_mode(
    feed: FakeNotesApi, notes: XNotesAdapter
) -> None:
    notes.evaluate("11", NOTE)

    receipt = notes.post_reply(summons("11"), NOTE)

    assert [n.post_id for n in feed.notes] == ["11"]
    sent = feed.notes[0]
    assert sent.test_mode is True
    assert sent.info == {
        "text": NOTE,
        "classification": "misinformed_or_potentially_misleading",
        "misleading_tags": ["factual_error"],
        "trustworthy_sources": True,
    }
    assert receipt.reply_id == sent.id
    assert feed.calls("POST /2/notes/evaluate") == 1  # the stored score of this exact text


def test_a_note_not_above_the_floor_is_never_posted(
    feed: FakeNotesApi, db: Database, clock: Clock
) -> None:
    feed.scores["11"] = 0.5
    prepare(db, "11")
    with pytest.raises(PlatformError) as caught:
        adapter(feed, db, clock, floor=0.5).post_reply(summons("11"), NOTE)
    assert not caught.value.retryable
    assert feed.calls("POST /2/notes") == 0


def test_an_edited_text_is_evaluated_again_under_its_own_hash(
    feed: FakeNotesApi, db: Database, notes: XNotesAdapter
) -> None:
    notes.evaluate("11", NOTE)
    edited = NOTE.replace("does not kill", "cannot kill")

    notes.post_reply(summons("11"), edited)

    store = SqlNoteStore(db)
    assert feed.evaluated[-1]["note_text"] == edited
    assert store.score("11", text_hash(edited)) == 0.8
    assert store.score("11", text_hash(NOTE)) == 0.8
    assert feed.notes[0].info["text"] == edited


def test_an_evaluate_error_never_lets_the_note_out(
    feed: FakeNotesApi, db: Database, clock: Clock
) -> None:
    prepare(db, "11")
    feed.fail("POST /2/notes/evaluate", Failure(500, {"title": "down"}))
    with pytest.raises(PlatformError):
        adapter(feed, db, clock).post_reply(summons("11"), NOTE)
    assert feed.calls("POST /2/notes") == 0


def test_user_already_created_a_note_is_done_with_the_existing_note(
    feed: FakeNotesApi, notes: XNotesAdapter
) -> None:
    first = notes.post_reply(summons("11"), NOTE)

    again = notes.post_reply(summons("11"), NOTE)

    assert again.reply_id == first.reply_id
    assert len(feed.notes) == 1


def test_after_a_kill_between_intent_and_receipt_the_note_is_found_not_written_again(
    feed: FakeNotesApi, db: Database, monkeypatch: pytest.MonkeyPatch, notes: XNotesAdapter
) -> None:
    def killed(*args: object) -> None:
        raise SystemExit("killed after the POST")

    monkeypatch.setattr(notes.store, "mark_submitted", killed)
    with pytest.raises(SystemExit):
        notes.post_reply(summons("11"), NOTE)
    monkeypatch.undo()

    found = notes.find_reply(summons("11"))

    assert found is not None and found.reply_id == feed.notes[0].id
    assert len(feed.notes) == 1
    assert SqlNoteStore(db).submissions_since(NOW - timedelta(hours=1), True) == [NOW]


def test_the_daily_limit_answer_sets_the_cap_to_the_last_24_hours_and_keeps_the_rest_queued(
    db: Database, clock: Clock
) -> None:
    pages = [[post(str(i), f"claim {i}", NOW) for i in range(6)]]
    with FakeNotesApi(pages, daily_limit=3, clock=clock) as api:
        notes = adapter(api, db, clock, initial_cap=10)
        for i in range(6):
            prepare(db, str(i))
        for i in range(3):
            notes.post_reply(summons(str(i)), NOTE)
        with pytest.raises(RateLimited) as limited:
            notes.post_reply(summons("3"), NOTE)
        assert limited.value.reset_at == NOW + timedelta(hours=24)
        assert notes.store.learned_cap(True) == (3, NOW)

        # The learned cap holds the next one back without asking X.
        posts_before = api.calls("POST /2/notes")
        with pytest.raises(RateLimited):
            notes.post_reply(summons("4"), NOTE)
        assert api.calls("POST /2/notes") == posts_before

        # A day later the learned cap no longer binds: X's answers decide again.
        clock.now += timedelta(hours=24)
        for i in (3, 4, 5):
            notes.post_reply(summons(str(i)), NOTE)
        assert [n.post_id for n in api.notes] == ["0", "1", "2", "3", "4", "5"]


def test_a_note_queued_for_the_cap_longer_than_its_ttl_expires(
    feed: FakeNotesApi, db: Database, clock: Clock
) -> None:
    prepare(db, "11", at=NOW - timedelta(hours=25))
    with pytest.raises(PlatformError) as caught:
        adapter(feed, db, clock, initial_cap=0).post_reply(summons("11"), NOTE)
    assert not caught.value.retryable and "expired" in str(caught.value)
    assert feed.calls("POST /2/notes") == 0


def test_a_note_without_an_http_source_is_a_final_error_and_never_sent(
    feed: FakeNotesApi, db: Database, clock: Clock
) -> None:
    prepare(db, "11")
    with pytest.raises(PlatformError) as caught:
        adapter(feed, db, clock).post_reply(summons("11"), "No source given at all.")
    assert "no http(s):// source URL" in str(caught.value) and not caught.value.retryable
    # Both specs' NoteInfo.text pattern refuses it: it never goes out.
    assert feed.calls("POST /2/notes") == 0 and feed.notes == []


def test_notes_written_pages_are_read_with_their_evaluator_buckets(
    feed: FakeNotesApi, db: Database, clock: Clock
) -> None:
    notes = adapter(feed, db, clock)
    for post_id in ("11", "13", "14"):
        prepare(db, post_id)
        notes.post_reply(summons(post_id), NOTE)

    written = list(notes.client.notes_written(test_mode=True))

    assert [n.post_id for n in written] == ["11", "13", "14"]
    assert written[0].buckets == {
        "UrlValidity": "High",
        "HarassmentAbuse": "High",
        "ClaimOpinion": "High",
    }
    assert feed.calls("GET /2/notes/search/notes_written") == 2


def test_after_a_kill_between_intent_and_post_the_retry_writes_exactly_one_note(
    feed: FakeNotesApi, monkeypatch: pytest.MonkeyPatch, notes: XNotesAdapter
) -> None:
    def killed(*args: object, **kwargs: object) -> None:
        raise SystemExit("killed before the POST")

    monkeypatch.setattr(notes.client, "create_note", killed)
    with pytest.raises(SystemExit):
        notes.post_reply(summons("11"), NOTE)
    monkeypatch.undo()
    assert feed.notes == []

    assert notes.find_reply(summons("11")) is None  # what posting asks on a second attempt
    notes.post_reply(summons("11"), NOTE)
    notes.post_reply(summons("11"), NOTE)  # and once more: X says it is already there

    assert len(feed.notes) == 1
    assert feed.calls("POST /2/notes") == 2


def test_the_poll_syncs_note_statuses_when_due_and_not_again_within_the_interval(
    feed: FakeNotesApi, db: Database, clock: Clock
) -> None:
    prepare(db, "11")
    notes = adapter(feed, db, clock, sync_interval=timedelta(hours=3))
    notes.post_reply(summons("11"), NOTE)

    notes.fetch_summons(None)
    clock.now += timedelta(hours=1)
    notes.fetch_summons(None)
    assert feed.calls("GET /2/notes/search/notes_written") == 1
    clock.now += timedelta(hours=2)
    notes.fetch_summons(None)
    assert feed.calls("GET /2/notes/search/notes_written") == 2
