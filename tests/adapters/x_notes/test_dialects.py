"""X's two published specs (2.159 and 2.167, ../shared/specs) disagree on the evaluate path and
the feed's names; the client speaks both, 2.167 first, and keeps what the live API answered.
Every exchange here is also held to the specs (tests/contract)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

from adapters.base import TargetStatus
from adapters.x.client import XCredentials
from adapters.x_notes.adapter import NotesOptions, XNotesAdapter
from adapters.x_notes.budget import RequestBudget
from adapters.x_notes.client import NotesClient
from bot.notes.store import SqlNoteStore
from storage.db import Database
from testing.fakes.x_notes_api import FakeNotesApi, post

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
CREDS = XCredentials("bearer", "ck", "cs", "at", "ats", "1", "factnote")
NOTE = "Lemon water does not kill flu viruses: https://ministry.example/flu/lemon"
PAGES = [[post("11", "fresh claim", NOW - timedelta(hours=1))]]


def client(api: FakeNotesApi, **kw: str) -> NotesClient:
    return NotesClient(
        CREDS, RequestBudget(90, timedelta(minutes=15), lambda: NOW), base_url=api.base_url, **kw
    )


def feed_params(api: FakeNotesApi) -> list[set[str]]:
    """The query parameter names of each feed request, in order."""
    return [
        set(parse_qs(urlsplit(r.target).query))
        for r in api.exchanges
        if r.target.startswith("/2/notes/search/posts_eligible_for_notes")
    ]


def test_evaluate_falls_back_to_the_2159_path_on_a_404_and_keeps_it() -> None:
    with FakeNotesApi(PAGES, dialects=("2.159",)) as api:
        notes = client(api)
        assert notes.evaluate("11", NOTE) == 0.8
        assert notes.evaluate("11", NOTE) == 0.8
        assert api.calls("POST /2/notes/evaluate") == 1  # tried once, answered 404
        assert api.calls("POST /2/evaluate_note") == 2


def test_evaluate_falls_back_to_the_2167_path_when_the_configured_one_is_gone() -> None:
    with FakeNotesApi(PAGES, dialects=("2.167",)) as api:
        notes = client(api, evaluate_path="/2/evaluate_note")
        assert notes.evaluate("11", NOTE) == 0.8
        assert notes.evaluate("11", NOTE) == 0.8
        assert api.calls("POST /2/evaluate_note") == 1
        assert api.calls("POST /2/notes/evaluate") == 2


def test_the_feed_asks_in_2167_names_first_for_note_requests_and_shown_notes() -> None:
    with FakeNotesApi(PAGES) as api:
        list(client(api).eligible_posts(**FEED))
        (sent,) = feed_params(api)
        query = parse_qs(urlsplit(api.exchanges[0].target).query)
    assert "post.fields" in sent and "tweet.fields" not in sent
    fields = query["post.fields"][0].split(",")
    assert {"note_request_suggestions", "matched_media_notes", "suggested_source_links"} <= set(
        fields
    )
    assert "referenced_posts" in query["expansions"][0].split(",")


def test_the_feed_falls_back_to_2159_names_on_a_400_and_keeps_them(db: Database) -> None:
    pages = [[post("11", "claim", NOW - timedelta(hours=1), source_links=["https://a.example/1"])]]
    with FakeNotesApi(pages, dialects=("2.159",)) as api:
        notes = XNotesAdapter(client(api), SqlNoteStore(db), NotesOptions(), clock=lambda: NOW)
        first = notes.fetch_summons(None)
        notes.fetch_summons(None)
        sent = feed_params(api)
    assert ["post.fields" in s for s in sent] == [True, False, False]
    assert all("tweet.fields" in s for s in sent[1:])
    assert [s.id for s in first.summons if s.target_status is TargetStatus.OK] == ["11"]


FEED = {"test_mode": True, "post_selection": "feed_size:small", "max_results": 100, "max_pages": 1}
