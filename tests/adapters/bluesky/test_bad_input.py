"""Bluesky notifications and posts a reader must survive: unreadable, odd or oversized input."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import pytest
from sqlalchemy import select

from adapters.base import (
    Summons,
    TargetStatus,
)
from adapters.bluesky.adapter import BlueskyAdapter
from adapters.bluesky.depth import MAX_ITEM_DEPTH, TOO_DEEP, cap_depth
from storage.db import Database
from storage.models import Request as RequestRow
from tests.adapters.bluesky.helpers import (
    ALICE,
    BOT_HANDLE,
    CAROL,
    DAVE,
    FakePDS,
    load,
)

# ------------------------------------------------------------------ bad input
# notifications_bad_input.json and thread_{kim,leo,mia}_*.json: shapes from the SDK's models
# (list_notifications.py Notification; feed/defs.py PostView; embed/video.py View;
# feed/post.py Record, `text` maxLength 3000), with what a reader must survive; see SOURCES.md.

KIM = "at://did:plc:kim3de6fg9hi2jk5lm8no1pq/app.bsky.feed.post/3lkimvideo7t2"
LEO = "at://did:plc:leo7qr0st3uv6wx9yz2ab5cd/app.bsky.feed.post/3lleopoll8u3a"
MIA = "at://did:plc:mia1ef4gh7ij0kl3mn6op9qr/app.bsky.feed.post/3lmialongt9v4"
NED = "at://did:plc:ned5st8uv1wx4yz7ab0cd3ef/app.bsky.feed.post/3lnedbroken5w"
OLA = "at://did:plc:ola9gh2ij5kl8mn1op4qr7st/app.bsky.feed.post/3lolaoddtime6x"
PIA = "at://did:plc:pia2uv5wx8yz1ab4cd7ef0gh/app.bsky.feed.post/3lpiafacets7y"


def fetch_bad_input(adapter: BlueskyAdapter, pds: FakePDS) -> tuple[dict[str, Summons], str]:
    pds.notifications_file = "notifications_bad_input.json"
    result = adapter.fetch_summons("2026-03-01T10:30:00.000Z")
    assert result.cursor is not None
    return {s.id: s for s in result.summons}, result.cursor


def test_unreadable_notifications_are_recorded_as_skipped_and_the_cursor_moves_past_them(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    found, cursor = fetch_bad_input(adapter, pds)

    assert cursor == "2026-03-01T11:05:00.000Z"
    assert len(found) == 7  # nothing lost
    ned = found[NED]
    assert ned.target_status is TargetStatus.UNAVAILABLE
    assert ned.target_reason.startswith("unreadable summons: ")
    assert "author: Field required" in ned.target_reason and "cid" in ned.target_reason
    [no_uri] = [s for s in found.values() if s.id.startswith("malformed:bluesky:sha256-")]
    assert "uri: Field required" in no_uri.target_reason
    ola = found[OLA]
    assert ola.target_status is TargetStatus.UNAVAILABLE
    assert "indexedAt is not a date-time: 'yesterday'" in ola.target_reason
    assert ola.author == "ola.bsky.social"


def test_a_bad_notification_through_intake_is_a_skipped_request_and_the_poll_succeeds(
    adapter: BlueskyAdapter, pds: FakePDS, db: Database
) -> None:
    from bot.requests.intake import poll
    from storage.models import Cursor

    pds.notifications_file = "notifications_bad_input.json"
    result = poll(adapter, db, "dry-run")

    assert result.error is None and result.new == 7
    with db.session() as session:
        rows = {r.summons_id: r for r in session.scalars(select(RequestRow))}
        cursor = session.get(Cursor, "bluesky")
    assert NED in rows and cursor is not None and cursor.cursor == "2026-03-01T11:05:00.000Z"

    from bot.config import RuntimeConfig
    from bot.requests.triage import triage_pending

    triage_pending(db, RuntimeConfig(), {"bluesky": BOT_HANDLE})
    with db.session() as session:
        ned = session.scalars(select(RequestRow).where(RequestRow.summons_id == NED)).one()
        kim = session.scalars(select(RequestRow).where(RequestRow.summons_id == KIM)).one()
    assert ned.state == "skipped"
    assert ned.reason.startswith("target unavailable: unreadable summons: ")
    # Readable, but posted on 2026-03-01: older than the default 6 h when it was taken in.
    assert kim.state == "skipped" and kim.reason.startswith("summons older than 6 h (created ")


def test_a_video_embed_is_a_video_and_an_unknown_embed_is_recorded(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    found, _ = fetch_bad_input(adapter, pds)

    video = found[KIM].target
    assert video is not None and found[KIM].target_status is TargetStatus.SELF
    [clip] = video.media
    assert clip.kind == "video"
    assert clip.alt_text == "Water pouring through a station entrance"
    assert clip.url.endswith("/bafkreivideokim/thumbnail.jpg")
    poll = found[LEO].target
    assert poll is not None
    [unknown] = poll.media
    assert (unknown.kind, unknown.url) == ("unsupported", "")
    assert unknown.note == "embed app.bsky.embed.poll#view not read"


def test_oversized_text_with_a_lone_surrogate_is_cut_and_kept_storable(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    found, _ = fetch_bad_input(adapter, pds)

    mia = found[MIA]
    # The body escaped half an emoji ("\\ud83d"): kept as a visible escape, storable.
    assert mia.text.startswith("@factnote.bsky.social is \\ud83d this true? The council")
    mia.text.encode("utf-8")
    assert len(mia.text) == 3000
    assert mia.notes == ["text cut to 3,000 of 3,223 characters"]
    assert mia.target is not None and len(mia.target.text) == 3000
    assert mia.target.notes == mia.notes


def test_a_record_missing_created_at_with_a_broken_facet_is_read_without_them(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    found, _ = fetch_bad_input(adapter, pds)

    pia = found[PIA]
    assert pia.text == "@factnote.bsky.social is the bridge closing?"
    assert pia.created_at == datetime(2026, 3, 1, 11, 0, tzinfo=UTC)
    assert pia.notes == [
        "createdAt missing: the indexing time is used",
        "facets could not be read: left out",
    ]


def test_a_body_that_is_not_utf8_is_read_with_replacement_characters(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    raw = json.dumps(load("notifications_page1.json")).encode()
    raw = raw.replace(b"check this please", b"check \xff\xfe please")
    headers = {"content-type": "application/json; charset=utf-8"}
    pds.fail(
        "app.bsky.notification.listNotifications", httpx.Response(200, content=raw, headers=headers)
    )

    result = adapter.fetch_summons(None)

    carol = next(s for s in result.summons if s.id == CAROL)
    assert carol.text == "@factnote.bsky.social check \ufffd\ufffd please"


# ------------------------------------------------------------------ deep nesting
# A post record may carry fields the lexicon does not name and an embed of a `$type` the SDK
# does not know (open unions, atproto_client/models/unknown_union.py): a stranger can nest them
# to any depth. pydantic_core's from_json (the SDK's parser, atproto_client/request.py
# `_parse_response`) refuses a body past ~200 levels, Python's json past ~1000 (RecursionError).


def _page_with(pds: FakePDS, uri: str, where: str, levels: int) -> None:
    """Serve page 1 with `uri`'s record nesting a value `levels` deep (written as text: Python's
    own json cannot write 5,000 levels either)."""
    page = load("notifications_page1.json")
    [note] = [n for n in page["notifications"] if n["uri"] == uri]
    if where == "field":
        note["record"]["unknownField"] = "DEEP"
    else:
        note["record"]["embed"] = {"$type": "app.bsky.embed.unknown", "x": "DEEP"}
    deep = '{"x":' * (levels - 1) + "{}" + "}" * (levels - 1)
    body = json.dumps(page).replace('"DEEP"', deep)
    headers = {"content-type": "application/json; charset=utf-8"}
    pds.fail(
        "app.bsky.notification.listNotifications",
        httpx.Response(200, content=body.encode(), headers=headers),
    )


@pytest.mark.parametrize(
    ("where", "levels"),
    [("field", 200), ("embed", 200), ("field", 5000), ("embed", 40)],
)
def test_a_deeply_nested_notification_is_a_skipped_summons_and_the_page_and_cursor_go_on(
    adapter: BlueskyAdapter, pds: FakePDS, where: str, levels: int
) -> None:
    _page_with(pds, CAROL, where, levels)

    result = adapter.fetch_summons(None)

    found = {s.id: s for s in result.summons}
    assert result.cursor == "2026-03-01T10:05:00.000Z"  # the deep one was the newest
    carol = found[CAROL]
    assert carol.target_status is TargetStatus.UNAVAILABLE
    assert carol.target_reason == (
        f"unreadable summons: nested deeper than {MAX_ITEM_DEPTH} levels: not read"
    )
    assert carol.author == "carol.example.com"
    # The other mentions on the page are read as ever.
    assert found[DAVE].target_status is not TargetStatus.UNAVAILABLE
    assert ALICE in found


def test_a_deep_notification_through_intake_is_a_skipped_request_and_later_polls_work(
    adapter: BlueskyAdapter, pds: FakePDS, db: Database
) -> None:
    from bot.requests.intake import poll
    from storage.models import Cursor

    _page_with(pds, CAROL, "field", 200)
    first = poll(adapter, db, "dry-run")
    again = poll(adapter, db, "dry-run")  # the fake's next page is the plain one

    assert first.error is None and first.new >= 3
    assert again.error is None
    with db.session() as session:
        carol = session.scalars(select(RequestRow).where(RequestRow.summons_id == CAROL)).one()
        cursor = session.get(Cursor, "bluesky")
    assert carol.target is None
    assert cursor is not None and cursor.cursor == "2026-03-01T10:05:00.000Z"


def test_cap_depth_cuts_only_values_past_the_limit_and_leaves_brackets_in_strings() -> None:
    text = json.dumps({"a": "[[[{{{", "b": [[[1]]], "c": [[2]]})

    capped, cuts = cap_depth(text, limit=3)

    assert cuts == 1
    assert json.loads(capped) == {"a": "[[[{{{", "b": [[TOO_DEEP]], "c": [[2]]}
    assert cap_depth("[[[", limit=1) == ("[[[", 0)  # unbalanced stays unparseable
