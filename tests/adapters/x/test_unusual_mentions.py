"""X mentions a reader must survive: bad input, access refusals, reply prefixes, tweepy's types."""

from __future__ import annotations

import json

import pytest
import responses
import tweepy
from sqlalchemy import select

from adapters.base import (
    MAX_TEXT_CHARS,
    AccessDenied,
    PlatformError,
    Summons,
    TargetStatus,
)
from adapters.x.adapter import XAdapter
from storage.db import Database
from storage.models import Cursor
from storage.models import Request as RequestRow
from tests.adapters.x.helpers import (
    CREDS,
    MENTIONS,
    NOT_ENROLLED,
    PROBLEM,
    Sleeps,
    adapter,
    fixture,
    forbidden,
)

# Bad input (tests/fixtures/x/mentions_bad_input.json; shapes from X's OpenAPI spec as listed
# in tests/fixtures/x/SOURCES.md): each mention is read on its own.
# The page breaks the spec on purpose (a date that is not one, an item without an id, ...):
# the contract tests check these tests' requests, not that answer.
BAD_INPUT = pytest.mark.off_spec("mentions_bad_input.json is malformed on purpose")


def bad_input(api: responses.RequestsMock, sleeps: Sleeps) -> tuple[dict[str, Summons], str]:
    api.get(MENTIONS, json=fixture("mentions_bad_input"))
    result = adapter(sleeps).fetch_summons("1897000000000000200")
    assert result.cursor is not None
    return {s.id: s for s in result.summons}, result.cursor


@BAD_INPUT
def test_unreadable_mentions_are_recorded_as_skipped_and_the_rest_are_read(
    api: responses.RequestsMock, sleeps: Sleeps, db: Database
) -> None:
    found, cursor = bad_input(api, sleeps)

    # The cursor moves past every item, readable or not: no poison item fails later polls.
    assert cursor == "1897000000000000304"
    bad_date = found["1897000000000000303"]
    assert bad_date.target_status is TargetStatus.UNAVAILABLE
    assert bad_date.target_reason.startswith("unreadable summons: created_at: ")
    [no_id] = [s for s in found.values() if s.id.startswith("malformed:x:sha256-")]
    assert "id: Field required" in no_id.target_reason
    assert {"1897000000000000304", "1897000000000000301", "1897000000000000300"} <= set(found)

    # Through intake: every item becomes a request row, and the poll is not failing.
    from bot.requests.intake import poll

    api.get(MENTIONS, json=fixture("mentions_bad_input"))
    poll(adapter(sleeps), db, "dry-run")
    with db.session() as session:
        rows = {r.summons_id: r for r in session.scalars(select(RequestRow))}
        cursor_row = session.get(Cursor, "x")
    assert len(rows) == 5
    assert cursor_row is not None and cursor_row.last_error is None


@BAD_INPUT
def test_a_video_is_recorded_as_video_and_unreadable_media_are_noted(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    found, _ = bad_input(api, sleeps)

    target = found["1897000000000000304"].target
    assert target is not None
    video, gif, photo, missing = target.media
    assert (video.kind, video.alt_text) == ("video", "A flooded street")
    assert video.url.endswith("/ext_tw_video_thumb/1897000000000000061/pu/img/flood.jpg")
    assert gif.kind == "animated_gif"
    assert (photo.kind, photo.url, photo.note) == (
        "photo",
        "",
        "media 3_1897000000000000063: no URL in the response",
    )
    assert missing.kind == "unsupported"
    assert missing.note == "media 3_1897000000000000064: not included in the response"


@BAD_INPUT
def test_an_included_post_that_cannot_be_read_makes_the_target_unavailable_with_why(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    found, _ = bad_input(api, sleeps)

    quoting = found["1897000000000000301"]
    assert quoting.target_status is TargetStatus.UNAVAILABLE
    assert quoting.target_reason.startswith("post could not be read: referenced_tweets: ")


@BAD_INPUT
def test_text_with_a_lone_surrogate_is_kept_storable_with_a_note(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    found, _ = bad_input(api, sleeps)

    odd = found["1897000000000000300"]
    assert odd.text == "@factnote is \\ud83d this right? (long post)"
    odd.text.encode("utf-8")  # storable: no lone surrogate left
    assert odd.notes == ["text had characters that are not valid Unicode; kept as escapes"]


@BAD_INPUT
def test_oversized_text_is_cut_and_the_cut_noted(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    body = fixture("mentions_bad_input")
    huge = "@factnote " + "claim " * 10_000
    body["data"][4]["note_tweet"]["text"] = huge
    api.get(MENTIONS, json=body)

    [odd] = [s for s in adapter(sleeps).fetch_summons("1").summons if s.id == "1897000000000000300"]

    assert odd.text == huge[:MAX_TEXT_CHARS]
    assert odd.notes == [f"text cut to 25,000 of {len(huge):,} characters"]


@pytest.mark.off_spec("a body that is not UTF-8 cannot be JSON, so not any schema")
def test_a_body_with_bytes_that_are_not_utf8_is_still_read(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    # requests decodes a body that is not UTF-8 with a guessed charset (Response.json falls
    # back to Response.text), so the page is read and its text stays storable.
    raw = json.dumps(fixture("mentions_page2")).encode().replace(b"naked eye", b"naked \xff eye")
    api.get(MENTIONS, body=raw, content_type="application/json")

    result = adapter(sleeps).fetch_summons("1897000000000000001")

    wall = next(s for s in result.summons if s.id == "1897000000000000102")
    assert wall.text.startswith("@factnote The Great Wall of China is visible")
    wall.text.encode("utf-8")


def test_fetch_by_an_app_outside_a_project_is_access_denied(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(MENTIONS, status=403, content_type=PROBLEM, json=NOT_ENROLLED)

    with pytest.raises(AccessDenied) as err:
        adapter(sleeps).fetch_summons(None)

    assert err.value.status == 403 and err.value.retryable


def test_fetch_forbidden_for_another_reason_is_a_plain_platform_error(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(MENTIONS, status=403, content_type=PROBLEM, json=forbidden("Forbidden"))

    with pytest.raises(PlatformError) as err:
        adapter(sleeps).fetch_summons(None)

    assert type(err.value) is PlatformError
    assert err.value.status == 403 and not err.value.retryable


def test_a_reply_chain_with_our_handle_only_in_the_prefix_makes_no_request(
    api: responses.RequestsMock, sleeps: Sleeps, db: Database
) -> None:
    from bot.requests.intake import poll

    # Under our reply, X prefixed "@factnote" to Erin's and Frank's replies; only Gail typed it.
    api.get(MENTIONS, json=fixture("mentions_reply_chain"))

    result = poll(adapter(sleeps), db, "dry-run")

    assert (result.seen, result.new, result.error) == (1, 1, None)
    with db.session() as session:
        (request,) = session.scalars(select(RequestRow)).all()
        cursor = session.get(Cursor, "x")
    assert request.summons_id == "1897000000000000502"
    assert request.summons["replies_to_bot"] is False
    # The skipped mentions are behind the cursor: they are not read again.
    assert cursor is not None and cursor.cursor == "1897000000000000502"


def test_prefix_only_mentions_move_the_cursor_past_them(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    chain = fixture("mentions_reply_chain")
    chain["data"] = chain["data"][1:]  # Erin's and Frank's only
    api.get(MENTIONS, json=chain)

    result = adapter(sleeps).fetch_summons("1897000000000000400")

    assert result.summons == []
    assert result.cursor == "1897000000000000502"


def test_a_mention_typed_at_the_start_of_a_reply_whose_prefix_was_removed_counts(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    # Mention 101 replies to a post but starts with "@factnote": the author cleared the prefix
    # (display_text_range starts at 0), so the handle was typed.
    api.get(MENTIONS, json=fixture("mentions_page2"))

    ids = [s.id for s in adapter(sleeps).fetch_summons("1897000000000000001").summons]

    assert "1897000000000000101" in ids


def test_injected_client_with_tweepy_default_return_type_gives_same_summons(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    for _ in range(2):
        api.get(MENTIONS, json=fixture("mentions_page1"))
    client = tweepy.Client(
        bearer_token=CREDS.bearer_token,
        consumer_key=CREDS.consumer_key,
        consumer_secret=CREDS.consumer_secret,
        access_token=CREDS.access_token,
        access_token_secret=CREDS.access_token_secret,
    )

    via_objects = XAdapter(CREDS, client=client, sleep=sleeps, max_pages=1).fetch_summons(None)
    via_dicts = adapter(sleeps, max_pages=1).fetch_summons(None)

    assert via_objects == via_dicts
    assert [s.target_status for s in via_objects.summons] == [
        TargetStatus.OK,
        TargetStatus.OK,
        TargetStatus.SELF,
    ]
    photo_post = via_objects.summons[0].target
    assert photo_post is not None and photo_post.author == "bob"
    assert [m.url for m in photo_post.media] == ["https://pbs.twimg.com/media/GsharkAbCd.jpg"]
