"""What the Community Notes feed is asked for and how its posts are triaged: the quoted post
and its media expanded, posts whose media already carry a shown note skipped, unreadable items
recorded, future-dated posts refused. Every exchange is held to X's specs (tests/contract)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from adapters.base import FetchResult, TargetStatus
from adapters.x.client import XCredentials
from adapters.x_notes.adapter import NotesOptions, XNotesAdapter
from adapters.x_notes.budget import RequestBudget
from adapters.x_notes.client import NotesClient
from bot.notes.store import SqlNoteStore
from storage.db import Database
from testing.fakes.x_notes_api import FakeNotesApi, post

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
CREDS = XCredentials("bearer", "ck", "cs", "at", "ats", "1", "factnote")
BOTH = pytest.mark.parametrize("dialects", [("2.159", "2.167"), ("2.159",)], ids=["2.167", "2.159"])


def fetch(db: Database, pages: list[list[dict[str, Any]]], **fake: Any) -> FetchResult:
    with FakeNotesApi(pages, **fake) as api:
        budget = RequestBudget(90, timedelta(minutes=15), lambda: NOW)
        client = NotesClient(CREDS, budget, base_url=api.base_url)
        notes = XNotesAdapter(client, SqlNoteStore(db), NotesOptions(), clock=lambda: NOW)
        return notes.fetch_summons(None)


def chosen(result: FetchResult) -> list[str]:
    return [s.id for s in result.summons if s.target_status is TargetStatus.OK]


def skipped(result: FetchResult) -> dict[str, str]:
    return {
        s.id: s.target_reason for s in result.summons if s.target_status is TargetStatus.UNAVAILABLE
    }


@BOTH
def test_a_quote_is_judged_with_the_post_it_quotes_and_its_media(
    db: Database, dialects: tuple[str, ...]
) -> None:
    quoted = post("20", "the original photo claim", NOW - timedelta(hours=3), media=["photo"])
    quote = post("21", "look at this", NOW - timedelta(hours=1), quoted=quoted)

    result = fetch(db, [[quote]], dialects=dialects)

    (summons,) = result.summons
    target = summons.target
    assert target is not None and target.quoted is not None
    assert target.quoted.text == "the original photo claim"
    assert [m.url for m in target.quoted.media] == ["https://pbs.twimg.com/media/3_200.jpg"]


def test_posts_whose_media_already_carry_a_shown_note_are_skipped(db: Database) -> None:
    shown = post(
        "30", "old fake photo", NOW - timedelta(hours=1), media=["photo"], shown_media_note=True
    )
    fresh = post("31", "new claim", NOW - timedelta(hours=2), media=["photo"])

    result = fetch(db, [[shown, fresh]])

    assert chosen(result) == ["31"]
    assert "already shown" in skipped(result)["30"]


@BOTH
def test_note_requested_posts_rank_first_because_the_feed_is_asked_for_them(
    db: Database, dialects: tuple[str, ...]
) -> None:
    # The fake serves only what is asked for: without asking, no post would carry requests.
    plain = post("40", "fresh claim", NOW - timedelta(minutes=10))
    asked = post(
        "41",
        "asked about",
        NOW - timedelta(hours=5),
        note_requests=2,
        source_links=["https://who.int/a"],
    )

    assert chosen(fetch(db, [[plain, asked]], dialects=dialects)) == ["41", "40"]


@pytest.mark.off_spec("the unreadable item is malformed on purpose")
def test_unreadable_feed_items_are_recorded_as_skipped_with_why_and_logged(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    broken = {"id": "50", "text": "x", "author_id": "42", "created_at": "next tuesday"}
    good = post("51", "a readable claim", NOW - timedelta(hours=1))

    with caplog.at_level(logging.WARNING, logger="adapters.x_notes.adapter"):
        result = fetch(db, [[broken, good]])

    assert chosen(result) == ["51"]
    assert "created_at" in skipped(result)["50"]
    assert any("feed item 50 could not be read" in r.getMessage() for r in caplog.records)


def test_a_post_dated_years_ahead_is_refused_with_why_not_ranked_first(db: Database) -> None:
    future = post("60", "from the future", NOW + timedelta(days=3650))
    now_ish = post("61", "a real claim", NOW - timedelta(hours=2))
    slightly_ahead = post("62", "clock skew", NOW + timedelta(minutes=2))

    result = fetch(db, [[future, now_ish, slightly_ahead]])

    assert chosen(result) == ["62", "61"]
    assert "in the future" in skipped(result)["60"]
