"""X reads: our reply found again on the bot's timeline, `recent_posts`, budgets."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import responses

from adapters.base import (
    PlatformError,
    RateLimited,
)
from tests.adapters.x.helpers import (
    API,
    BOT_ID,
    BOT_TWEETS,
    MENTIONS,
    NEXT_TOKEN,
    OVERLOADED,
    POST,
    PROBLEM,
    TOO_MANY,
    Sleeps,
    adapter,
    fixture,
    limits,
    path,
    query,
    summons,
)

# --- find_reply ---------------------------------------------------------------------------------


def test_find_reply_reads_at_most_two_pages(api: responses.RequestsMock, sleeps: Sleeps) -> None:
    page = fixture("bot_timeline")
    page["meta"]["next_token"] = NEXT_TOKEN
    for _ in range(2):
        api.get(BOT_TWEETS, json=page)

    assert adapter(sleeps, max_pages=5).find_reply(summons("1897000000000000400")) is None

    assert len(api.calls) == 2  # a third page was on offer


def test_find_reply_reads_nothing_after_x_refused_the_attempt(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.post(
        POST,
        status=429,
        content_type=PROBLEM,
        json=TOO_MANY,
        headers={"x-rate-limit-reset": "1772450100"},
    )
    api.post(POST, status=503, content_type=PROBLEM, json=OVERLOADED)
    api.get(BOT_TWEETS, json=fixture("bot_timeline"))
    x = adapter(sleeps, server_retries=0)

    with pytest.raises(RateLimited):
        x.post_reply(summons("1897000000000000102"), "hello")
    refused = x.find_reply(summons("1897000000000000102"))
    with pytest.raises(PlatformError):
        x.post_reply(summons("1897000000000000102"), "hello")
    maybe_posted = x.find_reply(summons("1897000000000000102"))

    assert refused is None
    assert [path(c) for c in api.calls] == ["/2/tweets", "/2/tweets", f"/2/users/{BOT_ID}/tweets"]
    assert maybe_posted is not None and maybe_posted.reply_id == "1897000000000000305"


def test_find_reply_finds_our_reply_on_the_bot_timeline(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(BOT_TWEETS, json=fixture("bot_timeline"))

    receipt = adapter(sleeps).find_reply(summons("1897000000000000102"))

    assert path(api.calls[0]) == f"/2/users/{BOT_ID}/tweets"
    assert api.calls[0].request.headers["Authorization"].startswith("OAuth ")
    assert query(api.calls[0]) == {
        "since_id": "1897000000000000102",
        "max_results": "100",
        "tweet.fields": "created_at,referenced_tweets",
    }
    assert receipt is not None
    assert receipt.reply_id == "1897000000000000305"
    assert receipt.url == "https://x.com/factnote/status/1897000000000000305"
    assert receipt.posted_at == datetime(2026, 3, 2, 11, 5, tzinfo=UTC)


def test_find_reply_returns_none_when_we_never_replied(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(BOT_TWEETS, json=fixture("bot_timeline"))
    api.get(BOT_TWEETS, json=fixture("mentions_empty"))

    x = adapter(sleeps)
    assert x.find_reply(summons("1897000000000000101")) is None
    assert x.find_reply(summons("1897000000000000400")) is None


# --- recent_posts -------------------------------------------------------------------------------


def test_recent_posts_resolves_the_handle_and_returns_newest_first(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(f"{API}/users/by/username/HealthAgency", json=fixture("user_lookup"))
    api.get(f"{API}/users/999/tweets", json=fixture("user_timeline"))

    posts = adapter(sleeps).recent_posts(
        "@HealthAgency", limit=3, since=datetime(2026, 3, 1, 1, 0, tzinfo=UTC)
    )

    timeline = query(api.calls[1])
    assert all(c.request.headers["Authorization"].startswith("OAuth ") for c in api.calls)
    assert timeline["start_time"] == "2026-03-01T01:00:00Z"
    assert timeline["exclude"] == "retweets"
    assert timeline["max_results"] == "5"  # the API's minimum page
    assert "note_tweet" in timeline["tweet.fields"].split(",")
    assert [p.id for p in posts] == [
        "1897000000000000403",
        "1897000000000000402",
        "1897000000000000401",
    ]
    assert all(p.author == "HealthAgency" and p.author_id == "999" for p in posts)
    assert posts[0].links == ["https://health.example.gov/measles"]
    assert posts[1].quoted is not None and posts[1].quoted.author == "carol"
    assert [(m.url, m.kind) for m in posts[1].media] == [
        ("https://pbs.twimg.com/tweet_video_thumb/Gif402.jpg", "animated_gif")
    ]


def test_recent_posts_of_an_unknown_user_is_a_clear_error(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(f"{API}/users/by/username/nobody_here", json=fixture("user_unknown"))

    with pytest.raises(PlatformError, match="nobody_here") as err:
        adapter(sleeps).recent_posts("nobody_here")

    assert not err.value.retryable


# --- budgets ------------------------------------------------------------------------------------


def test_budgets_follow_the_rate_limit_headers_per_endpoint(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(MENTIONS, json=fixture("mentions_empty"), headers=limits(450, 449, 1772450100))
    api.get(MENTIONS, json=fixture("mentions_empty"), headers=limits(450, 448, 1772450100))
    api.post(POST, status=201, json=fixture("create_tweet"), headers=limits(100, 99, 1772496000))
    x = adapter(sleeps)
    assert x.budgets() == []

    x.fetch_summons(None)
    x.fetch_summons(None)
    x.post_reply(summons(), "hello")

    budgets = {b.endpoint: b for b in x.budgets()}
    assert set(budgets) == {"GET /2/users/:id/mentions", "POST /2/tweets"}
    mentions = budgets["GET /2/users/:id/mentions"]
    assert (mentions.limit, mentions.remaining) == (450, 448)
    assert mentions.reset_at == datetime(2026, 3, 2, 11, 15, tzinfo=UTC)
    assert (budgets["POST /2/tweets"].limit, budgets["POST /2/tweets"].remaining) == (100, 99)
