"""Bluesky summons and their targets: threads, quotes, gates, deletions and bots."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from adapters.base import (
    PlatformError,
    ReplyForbidden,
    TargetStatus,
)
from adapters.bluesky.adapter import BlueskyAdapter
from tests.adapters.bluesky.helpers import (
    ALICE,
    BOB_ROOT,
    BOT_HANDLE,
    CAROL,
    DAVE,
    ERIN,
    FRANK,
    GINA,
    FakePDS,
    fetch_all,
)

BOB_REPLY = "at://did:plc:bob4rkq2m7zv1c9w3x5y8t6a/app.bsky.feed.post/3lbobreply2b2"
DAN_CLAIM = "at://did:plc:dan3wx6yz9ab2cd5ef8gh1ij/app.bsky.feed.post/3ldanclaim4d4"


# ------------------------------------------------------------------ summons and targets


def test_mention_deep_in_a_thread_targets_its_parent_and_keeps_reply_refs(
    adapter: BlueskyAdapter,
) -> None:
    alice = fetch_all(adapter)[ALICE]

    assert alice.author == "alice.bsky.social"
    assert alice.author_id == "did:plc:alice2nd5p8q1r4s7t0u3v6w"
    assert alice.text == "@factnote.bsky.social is this true?"
    assert alice.url == "https://bsky.app/profile/alice.bsky.social/post/3lalicement3c"
    assert alice.parent_id == BOB_REPLY
    assert alice.quoted_id is None
    assert alice.reply_context["root_uri"] == BOB_ROOT
    assert alice.reply_context["parent_uri"] == ALICE
    assert alice.reply_context["lang"] == "fr"
    assert alice.target_status is TargetStatus.OK
    assert alice.target is not None
    assert alice.target.id == BOB_REPLY
    assert alice.target.author == "bob.bsky.social"
    assert alice.target.links == ["https://blog.example.net/recall-proof"]
    assert [(m.url, m.alt_text) for m in alice.target.media] == [
        (
            "https://cdn.bsky.app/img/feed_fullsize/plain/"
            "did:plc:bob4rkq2m7zv1c9w3x5y8t6a/bafkreivialimage@jpeg",
            "A vial with black specks",
        )
    ]
    assert alice.reply_allowed and not alice.replies_to_bot and not alice.author_is_bot
    assert alice.created_at == datetime(2026, 3, 1, 10, 2, 59, 100000, tzinfo=UTC)


def test_quote_mention_targets_the_quoted_post(adapter: BlueskyAdapter) -> None:
    carol = fetch_all(adapter)[CAROL]

    assert carol.quoted_id == DAN_CLAIM
    assert carol.parent_id is None
    assert carol.target_status is TargetStatus.OK
    assert carol.target is not None
    assert carol.target.id == DAN_CLAIM
    assert carol.target.author == "dan.bsky.social"
    assert carol.target.text.startswith("Drinking hot water cures the flu.")
    assert carol.target.links == ["https://wellness.example.com/hot-water"]
    # A top-level post: our reply's root and parent are both the summons.
    assert carol.reply_context["root_uri"] == carol.reply_context["parent_uri"] == CAROL


def test_deleted_parent_is_missing_and_blocked_parent_is_blocked(adapter: BlueskyAdapter) -> None:
    summons = fetch_all(adapter)

    assert summons[ERIN].target_status is TargetStatus.MISSING
    assert summons[ERIN].target is None
    assert summons[FRANK].target_status is TargetStatus.BLOCKED
    assert summons[FRANK].target is None


def test_reply_disabled_thread_forbids_our_reply_without_posting(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    gina = fetch_all(adapter)[GINA]

    assert gina.reply_allowed is False
    assert gina.target_status is TargetStatus.SELF
    assert gina.target is not None
    assert gina.target.media[0].url.endswith("/bafkreichart@png")
    assert gina.target.media[0].alt_text is None
    with pytest.raises(ReplyForbidden):
        adapter.post_reply(gina, "Ce graphique est faux.")
    assert pds.named("com.atproto.repo.createRecord") == []


def test_reply_to_our_own_post_by_a_labelled_bot_is_flagged(adapter: BlueskyAdapter) -> None:
    dave = fetch_all(adapter)[DAVE]

    assert dave.replies_to_bot is True
    assert dave.author_is_bot is True
    assert dave.target is not None and dave.target.author == BOT_HANDLE


def test_known_bots_are_flagged_by_handle(make_adapter: Callable[..., BlueskyAdapter]) -> None:
    adapter = make_adapter(known_bots=["@Carol.example.com"])

    summons = fetch_all(adapter)

    assert summons[CAROL].author_is_bot is True
    assert summons[ALICE].author_is_bot is False


def test_deleted_summons_is_kept_but_cannot_be_answered(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    del pds.threads[ALICE]

    alice = fetch_all(adapter)[ALICE]

    assert alice.reply_allowed is False
    assert alice.target_status is TargetStatus.UNAVAILABLE
    assert "deleted" in alice.target_reason


def test_server_error_while_resolving_fails_the_fetch(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    pds.fail("app.bsky.feed.getPostThread", pds._error(503, "InternalServerError", "down"))

    with pytest.raises(PlatformError) as info:
        adapter.fetch_summons("2026-03-01T09:30:00.000Z")

    assert info.value.retryable is True
    assert pds.named("app.bsky.notification.updateSeen") == []
