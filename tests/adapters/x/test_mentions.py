"""X summons in: mentions read page by page since the cursor, each with its target."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

import pytest
import requests
import responses

from adapters.base import (
    RateLimited,
    Summons,
    TargetStatus,
)
from tests.adapters.x.helpers import (
    BOT_ID,
    MENTIONS,
    NEXT_TOKEN,
    OVERLOADED,
    PROBLEM,
    SECRETS,
    TOO_MANY,
    Sleeps,
    adapter,
    fixture,
    limits,
    path,
    query,
)

MENTION_QUERY = {
    "max_results": "100",
    "expansions": "author_id,referenced_tweets.id,referenced_tweets.id.author_id,"
    "in_reply_to_user_id,attachments.media_keys,referenced_tweets.id.attachments.media_keys",
    "tweet.fields": "created_at,display_text_range,author_id,conversation_id,in_reply_to_user_id,"
    "referenced_tweets,attachments,entities,lang,note_tweet,withheld",
    "media.fields": "url,preview_image_url,alt_text,type,duration_ms,variants",
    "user.fields": "username",
}


def two_pages(api: responses.RequestsMock) -> None:
    api.get(MENTIONS, json=fixture("mentions_page1"))
    api.get(MENTIONS, json=fixture("mentions_page2"))


# --- fetch_summons ------------------------------------------------------------------------------


def test_fetch_asks_for_mentions_since_cursor_with_expansions_as_the_bot_user(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(MENTIONS, json=fixture("mentions_loop"))

    result = adapter(sleeps).fetch_summons("1897000000000000150")

    assert len(api.calls) == 1
    call = api.calls[0]
    assert path(call) == f"/2/users/{BOT_ID}/mentions"
    assert query(call) == {**MENTION_QUERY, "since_id": "1897000000000000150"}
    # Read as the bot user (OAuth 1.0a), so the bot's own mentions are an "owned read".
    assert call.request.headers["Authorization"].startswith("OAuth ")
    assert (
        'oauth_token="' + SECRETS["FACTNOTE_X_ACCESS_TOKEN"] + '"'
        in call.request.headers["Authorization"]
    )
    # tweepy passes no timeout; the adapter's transport supplies one.
    assert call.request.req_kwargs["timeout"] == 30.0  # type: ignore[attr-defined]
    assert result.cursor == "1897000000000000202"


def test_fetch_pages_with_next_token_and_returns_oldest_first_with_newest_cursor(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    two_pages(api)

    result = adapter(sleeps).fetch_summons("1897000000000000001")

    first, second = (query(c) for c in api.calls)
    assert "pagination_token" not in first
    assert second == {
        **MENTION_QUERY,
        "since_id": "1897000000000000001",
        "pagination_token": NEXT_TOKEN,
    }
    assert [s.id for s in result.summons] == [f"1897000000000000{n}" for n in range(100, 106)]
    assert result.cursor == "1897000000000000105"
    assert all(s.platform == "x" for s in result.summons)
    assert sleeps == []


def test_fetch_without_cursor_sends_no_since_id(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(MENTIONS, json=fixture("mentions_loop"))

    adapter(sleeps).fetch_summons(None)

    assert query(api.calls[0]) == MENTION_QUERY


def test_no_new_mentions_keeps_previous_cursor(api: responses.RequestsMock, sleeps: Sleeps) -> None:
    api.get(MENTIONS, json=fixture("mentions_empty"))

    result = adapter(sleeps).fetch_summons("1897000000000000105")

    assert result.summons == []
    assert result.cursor is None


def by_id(api: responses.RequestsMock, sleeps: Sleeps, **kwargs: Any) -> dict[str, Summons]:
    two_pages(api)
    api.get(MENTIONS, json=fixture("mentions_loop"))
    x = adapter(sleeps, **kwargs)
    found = (
        x.fetch_summons("1897000000000000001").summons
        + x.fetch_summons("1897000000000000105").summons
    )
    return {s.id: s for s in found}


def test_reply_to_a_photo_post_targets_the_parent_with_its_media(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    s = by_id(api, sleeps)["1897000000000000103"]

    assert s.author == "erin" and s.author_id == "555"
    assert s.url == "https://x.com/erin/status/1897000000000000103"
    assert s.parent_id == "1897000000000000040" and s.quoted_id is None
    assert s.target_status == TargetStatus.OK
    assert s.target is not None
    assert s.target.id == "1897000000000000040"
    assert s.target.author == "bob"
    assert s.target.text.startswith("Sharks found swimming")
    assert s.target.url == "https://x.com/bob/status/1897000000000000040"
    assert [(m.url, m.kind) for m in s.target.media] == [
        ("https://pbs.twimg.com/media/GsharkAbCd.jpg", "photo")
    ]
    assert s.target.media[0].alt_text == "A shark fin in brown flood water next to a road sign"
    assert s.target.links == []  # the photo's own pic link is media, not a source
    assert s.reply_context == {"conversation_id": "1897000000000000040"}
    assert not s.replies_to_bot and not s.author_is_bot


def test_quote_targets_the_quoted_post_and_keeps_its_links(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    s = by_id(api, sleeps)["1897000000000000104"]

    assert s.quoted_id == "1897000000000000050" and s.parent_id is None
    assert s.target_status == TargetStatus.OK
    assert s.target is not None
    assert s.target.author == "carol"
    assert s.target.links == ["https://blog.example.com/water-myth"]
    assert s.target.created_at == datetime(2026, 3, 1, 8, 0, tzinfo=UTC)


def test_long_post_reads_full_text_and_links_from_note_tweet(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    s = by_id(api, sleeps)["1897000000000000105"]

    assert s.target_status == TargetStatus.SELF
    assert s.text.endswith("I have seen it shared thousands of times.")
    assert len(s.text) > 280
    assert s.author == "dave"
    # The mention is its own target, with the links of the long text, not the truncated one.
    assert s.target is not None and s.target.id == s.id and s.target.text == s.text
    assert s.target.links == [
        "https://journal.example.org/measles-trial",
        "https://viral.example.net/summary",
    ]


def test_plain_mention_carries_the_claim_itself(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    s = by_id(api, sleeps)["1897000000000000102"]

    assert s.target_status == TargetStatus.SELF
    assert s.parent_id is None and s.quoted_id is None
    assert s.target is not None and s.target.id == s.id and s.target.author == "alice"
    assert "Great Wall of China" in s.text
    assert s.created_at == datetime(2026, 3, 2, 10, 20, tzinfo=UTC)


def test_deleted_parent_is_missing_with_the_api_detail(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    s = by_id(api, sleeps)["1897000000000000101"]

    assert s.parent_id == "1897000000000000030"
    assert s.target is None
    assert s.target_status == TargetStatus.MISSING
    assert "Could not find tweet" in s.target_reason


def test_unauthorized_parent_is_not_ok_and_not_missing(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    s = by_id(api, sleeps)["1897000000000000100"]

    assert s.target is None
    assert s.target_status not in (TargetStatus.OK, TargetStatus.MISSING, TargetStatus.SELF)
    assert "not authorized" in s.target_reason


def test_post_withheld_in_countries_is_withheld(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    s = by_id(api, sleeps)["1897000000000000200"]

    assert s.target_status == TargetStatus.WITHHELD
    assert "DE" in s.target_reason and "FR" in s.target_reason


def test_mention_replying_to_our_own_reply_is_flagged(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    found = by_id(api, sleeps)

    assert found["1897000000000000201"].replies_to_bot
    assert found["1897000000000000201"].target is not None
    assert found["1897000000000000201"].target.author_is_bot  # the parent is ours
    assert [i for i, s in found.items() if s.replies_to_bot] == ["1897000000000000201"]


def test_known_bots_are_flagged_by_handle_case_insensitively(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    found = by_id(api, sleeps, known_bots=["@otherbot"])

    assert found["1897000000000000202"].author == "OtherBot"
    assert found["1897000000000000202"].author_is_bot
    assert [i for i, s in found.items() if s.author_is_bot] == ["1897000000000000202"]


def test_without_known_bots_no_author_is_a_bot(api: responses.RequestsMock, sleeps: Sleeps) -> None:
    assert not any(s.author_is_bot for s in by_id(api, sleeps).values())


def test_fetch_retries_a_failed_page_without_losing_its_token(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(MENTIONS, json=fixture("mentions_page1"))
    api.get(MENTIONS, status=503, content_type=PROBLEM, json=OVERLOADED)
    api.get(MENTIONS, body=requests.ConnectionError("connection reset by peer"))
    api.get(MENTIONS, json=fixture("mentions_page2"))

    result = adapter(sleeps).fetch_summons("1897000000000000001")

    assert len(api.calls) == 4
    assert [query(c).get("pagination_token") for c in api.calls] == [None] + [NEXT_TOKEN] * 3
    assert len(result.summons) == 6
    assert sleeps == [1.0, 2.0]


def test_fetch_rate_limited_raises_with_reset_and_does_not_sleep(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(
        MENTIONS,
        status=429,
        content_type=PROBLEM,
        json=TOO_MANY,
        headers=limits(450, 0, 1772450100),
    )

    with pytest.raises(RateLimited) as err:
        adapter(sleeps).fetch_summons("1897000000000000001")

    assert err.value.reset_at == datetime(2026, 3, 2, 11, 15, tzinfo=UTC)
    assert err.value.retryable
    assert sleeps == []
    assert len(api.calls) == 1


def test_fetch_stops_at_max_pages_and_warns_about_the_gap(
    api: responses.RequestsMock, sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    api.get(MENTIONS, json=fixture("mentions_page1"))

    with caplog.at_level(logging.WARNING, logger="adapters.x"):
        result = adapter(sleeps, max_pages=1).fetch_summons("1897000000000000001")

    assert len(api.calls) == 1
    assert result.cursor == "1897000000000000105"
    assert "skipped" in caplog.text


def test_fetch_without_cursor_reads_only_the_newest_page(
    api: responses.RequestsMock, sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    api.get(MENTIONS, json=fixture("mentions_page1"))  # has a next_token: an old backlog

    with caplog.at_level(logging.WARNING, logger="adapters.x"):
        result = adapter(sleeps).fetch_summons(None)

    assert len(api.calls) == 1
    assert [s.id for s in result.summons] == [f"1897000000000000{n}" for n in (103, 104, 105)]
    assert result.cursor == "1897000000000000105"
    assert "skipped" not in caplog.text  # a first run skips the backlog by design
