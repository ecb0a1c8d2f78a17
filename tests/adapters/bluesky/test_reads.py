"""Bluesky reads of our own repo and of timelines: `find_reply`, `recent_posts`, budgets."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from adapters.bluesky.adapter import BlueskyAdapter
from adapters.bluesky.replies import reply_record_key
from tests.adapters.bluesky.helpers import (
    ALICE,
    BOT_DID,
    CAROL,
    ERIN,
    HEALTH,
    POSTS,
    RESET_EPOCH,
    FakePDS,
    fetch_all,
)

# ------------------------------------------------------------------ find_reply, timelines, budgets


APPVIEW_READS = ("app.bsky.feed.getPostThread", "app.bsky.feed.getAuthorFeed")


def test_find_reply_reads_our_reply_from_our_repo_by_its_key(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    carol = fetch_all(adapter)[CAROL]
    adapter.post_reply(carol, "Non.")
    pds.calls.clear()

    receipt = adapter.find_reply(carol)

    assert receipt is not None
    assert receipt.reply_id == f"at://{BOT_DID}/app.bsky.feed.post/{reply_record_key(carol)}"
    assert [c.nsid for c in pds.calls] == ["com.atproto.repo.getRecord"]
    assert pds.calls[0].params["rkey"] == reply_record_key(carol)


@pytest.mark.parametrize(
    ("summons_uri", "reply_key", "posted_at"),
    [
        (ALICE, "3lourreply4n4", datetime(2026, 3, 1, 10, 6, tzinfo=UTC)),
        (ERIN, "3lerinanswe7q", datetime(2026, 3, 1, 10, 8, tzinfo=UTC)),
    ],
)
def test_find_reply_finds_a_reply_made_before_derived_keys_in_our_repo(
    adapter: BlueskyAdapter,
    pds: FakePDS,
    summons_uri: str,
    reply_key: str,
    posted_at: datetime,
) -> None:
    summons = fetch_all(adapter)[summons_uri]
    pds.calls.clear()

    receipt = adapter.find_reply(summons)

    assert receipt is not None
    assert receipt.reply_id == f"at://{BOT_DID}/app.bsky.feed.post/{reply_key}"
    assert receipt.posted_at == posted_at
    assert not [c for c in pds.calls if c.nsid in APPVIEW_READS]
    assert [c.nsid for c in pds.calls] == [
        "com.atproto.repo.getRecord",
        "com.atproto.repo.listRecords",
    ]


def test_find_reply_returns_none_when_we_never_replied(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    carol = fetch_all(adapter)[CAROL]

    assert adapter.find_reply(carol) is None
    assert not [c for c in pds.calls if c.nsid in APPVIEW_READS[1:]]


def test_find_reply_reads_at_most_two_pages_of_our_posts(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    alice = fetch_all(adapter)[ALICE]
    for n in range(250):  # newer posts of ours, none of them a reply to Alice
        key = f"3m{n:011d}"
        pds.posts[key] = {
            "uri": f"at://{BOT_DID}/{POSTS}/{key}",
            "cid": f"bafyreid{key}",
            "value": {"$type": POSTS, "text": "other", "createdAt": "2026-03-02T00:00:00Z"},
        }

    assert adapter.find_reply(alice) is None

    listed = pds.named("com.atproto.repo.listRecords")
    assert len(listed) == 2
    assert "cursor" not in listed[0].params
    assert listed[1].params["cursor"] == f"3m{150:011d}"  # the last key of the first page
    assert listed[0].params["limit"] == "100"


def test_recent_posts_skips_reposts_pages_and_stops_at_since(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    recent = adapter.recent_posts(HEALTH, limit=10, since=datetime(2026, 2, 15, tzinfo=UTC))
    every = adapter.recent_posts(HEALTH, limit=10)
    one = adapter.recent_posts(HEALTH, limit=1)

    assert [p.text for p in recent] == [
        "Flu season update: vaccination remains the best protection.",
        "No recall of any vaccine batch has been issued.",
    ]
    assert [p.id.rsplit("/", 1)[-1] for p in every] == [
        "3lhealtha1r",
        "3lhealthb2s",
        "3lhealthc3t",
        "3lhealthd4u",
    ]
    assert len(one) == 1
    feed_calls = pds.named("app.bsky.feed.getAuthorFeed")
    assert {c.params["filter"] for c in feed_calls} == {"posts_no_replies"}
    assert all(p.author == HEALTH for p in every)


def test_budgets_report_the_last_rate_limit_headers(adapter: BlueskyAdapter) -> None:
    assert adapter.budgets() == []

    adapter.recent_posts(HEALTH, limit=1)

    budgets = {b.endpoint: b for b in adapter.budgets()}
    feed = budgets["app.bsky.feed.getAuthorFeed"]
    assert feed.limit == 3000
    assert feed.remaining is not None and feed.remaining < 3000
    assert feed.reset_at == datetime.fromtimestamp(RESET_EPOCH, tz=UTC)


def test_recent_posts_since_naive_datetime_is_read_as_utc(adapter: BlueskyAdapter) -> None:
    naive = datetime(2026, 2, 15)
    aware = naive.replace(tzinfo=UTC)

    posts = adapter.recent_posts(HEALTH, since=naive)

    assert [p.id.rsplit("/", 1)[-1] for p in posts] == ["3lhealtha1r", "3lhealthb2s"]
    assert all(p.created_at >= aware for p in posts)
