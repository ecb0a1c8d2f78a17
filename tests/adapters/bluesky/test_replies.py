"""Bluesky replies out: thread refs, derived record keys, link facets, limits and errors."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import httpx
import pytest
from atproto_client.models.string_formats import TID_RE

from adapters.base import (
    PlatformError,
    RateLimited,
    ReplyForbidden,
    Summons,
)
from adapters.bluesky.adapter import BlueskyAdapter
from adapters.bluesky.replies import reply_record_key
from adapters.bluesky.text import ReplyTooLong, link_label
from tests.adapters.bluesky.helpers import (
    ALICE,
    BOB_ROOT,
    BOT_DID,
    CAROL,
    RESET_EPOCH,
    FakePDS,
    fetch_all,
    load,
)

# ------------------------------------------------------------------ replies


def test_reply_deep_in_a_thread_uses_thread_root_and_the_mention_as_parent(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    alice = fetch_all(adapter)[ALICE]
    thread = load("thread_alice_deep_reply.json")["thread"]

    receipt = adapter.post_reply(alice, "Aucun rappel n'a été annoncé.")

    (created,) = pds.named("com.atproto.repo.createRecord")
    assert created.body is not None
    assert created.body["repo"] == BOT_DID
    assert created.body["collection"] == "app.bsky.feed.post"
    record = created.body["record"]
    root, parent = record["reply"]["root"], record["reply"]["parent"]
    assert (root["uri"], root["cid"]) == (BOB_ROOT, thread["parent"]["parent"]["post"]["cid"])
    assert (parent["uri"], parent["cid"]) == (ALICE, thread["post"]["cid"])
    assert record["langs"] == ["fr"]
    assert record["text"] == "Aucun rappel n'a été annoncé."
    assert record["$type"] == "app.bsky.feed.post" and record["createdAt"]
    rkey = created.body["rkey"]
    assert receipt.reply_id == f"at://{BOT_DID}/app.bsky.feed.post/{rkey}"
    assert receipt.url == f"https://bsky.app/profile/factnote.bsky.social/post/{rkey}"


def test_the_reply_record_key_is_a_tid_fixed_by_the_summons(adapter: BlueskyAdapter) -> None:
    summons = fetch_all(adapter)
    alice = summons[ALICE]

    keys = {reply_record_key(s) for s in summons.values()}

    assert reply_record_key(alice) == reply_record_key(Summons.model_validate(alice.model_dump()))
    assert len(keys) == len(summons)
    assert all(TID_RE.match(k) for k in keys)
    # Same millisecond, another summons: another key.
    twin = alice.model_copy(update={"id": ALICE.replace("3lalicement3c", "3lalicetwin3d")})
    assert reply_record_key(twin) != reply_record_key(alice)
    # Odd client clocks still give a valid key.
    ancient = alice.model_copy(update={"created_at": datetime(1, 1, 1, tzinfo=UTC)})
    assert TID_RE.match(reply_record_key(ancient))


def test_a_retried_reply_after_a_crash_makes_no_second_post(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    alice = fetch_all(adapter)[ALICE]
    before = len(pds.posts)

    first = adapter.post_reply(alice, "Aucun rappel.")
    # The process died before storing `first`; the next attempt sends the same create.
    again = adapter.post_reply(alice, "Aucun rappel.")

    creates = pds.named("com.atproto.repo.createRecord")
    assert len(creates) == 2
    assert creates[0].body is not None and creates[1].body is not None
    assert creates[0].body["rkey"] == creates[1].body["rkey"] == reply_record_key(alice)
    assert len(pds.posts) == before + 1
    assert again.reply_id == first.reply_id
    assert again.posted_at == datetime.fromisoformat(creates[0].body["record"]["createdAt"])


def test_a_create_whose_answer_was_lost_is_confirmed_from_our_repo(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    carol = fetch_all(adapter)[CAROL]
    pds.lose_next_create_answer = True

    receipt = adapter.post_reply(carol, "Non.")

    assert receipt.reply_id == f"at://{BOT_DID}/app.bsky.feed.post/{reply_record_key(carol)}"
    assert len(pds.named("com.atproto.repo.createRecord")) == 1
    (read,) = pds.named("com.atproto.repo.getRecord")
    assert read.params["rkey"] == reply_record_key(carol)


def test_a_thread_gate_set_after_intake_stops_the_reply(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    alice = fetch_all(adapter)[ALICE]
    assert alice.reply_allowed
    # Alice's thread got a gate while the draft waited for review.
    pds.threads[ALICE]["thread"]["post"]["viewer"]["replyDisabled"] = True

    with pytest.raises(ReplyForbidden, match="thread gate"):
        adapter.post_reply(alice, "Aucun rappel.")

    assert pds.named("com.atproto.repo.createRecord") == []
    check = pds.named("app.bsky.feed.getPostThread")[-1]
    assert check.params["uri"] == ALICE


def test_a_summons_deleted_before_posting_is_not_answered(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    carol = fetch_all(adapter)[CAROL]
    del pds.threads[CAROL]

    with pytest.raises(ReplyForbidden, match="deleted"):
        adapter.post_reply(carol, "Non.")

    assert pds.named("com.atproto.repo.createRecord") == []


def test_reply_without_stored_refs_reads_them_from_the_summons_post(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    alice = fetch_all(adapter)[ALICE].model_copy(update={"reply_context": {}})

    adapter.post_reply(alice, "Non.")

    (created,) = pds.named("com.atproto.repo.createRecord")
    assert created.body is not None
    assert created.body["record"]["reply"]["root"]["uri"] == BOB_ROOT
    assert created.body["record"]["reply"]["parent"]["uri"] == ALICE


def test_link_facets_have_exact_byte_offsets_after_non_ascii_text(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    carol = fetch_all(adapter)[CAROL]
    url = "https://www.who.int/news/item/14-03-2026-hot-water-and-influenza"
    text = f"Résumé 🇫🇷👍🏽 中文說明: faux. Source {url}. Fin"

    adapter.post_reply(carol, text, [url])

    body = pds.named("com.atproto.repo.createRecord")[0].body
    assert body is not None
    record = body["record"]
    (facet,) = record["facets"]
    label = "who.int/news/item/14-03…"
    prefix = "Résumé 🇫🇷👍🏽 中文說明: faux. Source "
    assert link_label(url) == label
    assert record["text"] == f"{prefix}{label}. Fin"
    index = facet["index"]
    assert index["byteStart"] == len(prefix.encode())
    assert index["byteEnd"] == len(prefix.encode()) + len(label.encode())
    raw = record["text"].encode()
    assert raw[facet["index"]["byteStart"] : facet["index"]["byteEnd"]].decode() == label
    assert [(f["$type"], f["uri"]) for f in facet["features"]] == [
        ("app.bsky.richtext.facet#link", url)
    ]


def test_short_links_keep_their_whole_text_as_label() -> None:
    assert link_label("https://who.int/") == "who.int"
    assert link_label("https://www.cdc.gov/flu") == "cdc.gov/flu"


def test_only_the_approved_links_become_facets_the_rest_is_sent_as_plain_text(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    carol = fetch_all(adapter)[CAROL]
    approved = "https://who.int/flu"
    others = [
        "https://evil.example/x",  # a plain URL the guard did not approve
        "https://ｅvil．com/login",  # full-width: a browser opens evil.com
        "https://who.int\u200b.evil.example/x",  # zero-width space: who.int.evil.example
        "https://who.int/flu.evil.example",  # the approved URL as the start of another
    ]
    text = f"See {approved}. " + " ".join(others)

    adapter.post_reply(carol, text, [approved, "https://evil.example/y"])

    body = pds.named("com.atproto.repo.createRecord")[0].body
    assert body is not None
    record = body["record"]
    assert [f["features"][0]["uri"] for f in record["facets"]] == [approved]
    assert record["text"] == "See who.int/flu. " + " ".join(others)


def test_reply_over_300_graphemes_is_refused_before_posting(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    carol = fetch_all(adapter)[CAROL]

    with pytest.raises(ReplyTooLong):
        adapter.post_reply(carol, "👍🏽" * 301)
    # 300 emoji clusters fit although they are far more than 300 code points.
    adapter.post_reply(carol, "👍🏽" * 300)
    assert len(pds.named("com.atproto.repo.createRecord")) == 1


def carol_with_the_reply_failing(
    adapter: BlueskyAdapter, pds: FakePDS, failure: httpx.Response | Exception
) -> Summons:
    """Carol's summons, with the PDS answering the reply's createRecord with `failure`."""
    carol = fetch_all(adapter)[CAROL]
    pds.fail("com.atproto.repo.createRecord", failure)
    return carol


def test_rate_limited_reply_raises_with_the_reset_time_and_never_sleeps(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    too_many = httpx.Response(
        429,
        json={"error": "RateLimitExceeded", "message": "Rate Limit Exceeded"},
        headers={
            "ratelimit-limit": "5000",
            "ratelimit-remaining": "0",
            "ratelimit-reset": str(RESET_EPOCH),
        },
    )
    carol = carol_with_the_reply_failing(adapter, pds, too_many)

    started = time.monotonic()
    with pytest.raises(RateLimited) as info:
        adapter.post_reply(carol, "Non.")

    assert time.monotonic() - started < 1.0
    assert info.value.reset_at == datetime.fromtimestamp(RESET_EPOCH, tz=UTC)
    assert info.value.retryable is True


@pytest.mark.parametrize(
    ("failure", "retryable", "status"),
    [
        (httpx.Response(500, json={"error": "InternalServerError", "message": "boom"}), True, 500),
        (httpx.Response(502, text="bad gateway"), True, None),
        (httpx.ConnectError("connection refused"), True, None),
        (
            httpx.Response(400, json={"error": "InvalidRequest", "message": "bad record"}),
            False,
            400,
        ),
    ],
)
def test_reply_failures_map_to_typed_errors(
    adapter: BlueskyAdapter,
    pds: FakePDS,
    failure: httpx.Response | Exception,
    retryable: bool,
    status: int | None,
) -> None:
    carol = carol_with_the_reply_failing(adapter, pds, failure)

    with pytest.raises(PlatformError) as info:
        adapter.post_reply(carol, "Non.")

    assert not isinstance(info.value, ReplyForbidden)
    assert info.value.retryable is retryable
    if status is not None:
        assert info.value.status == status


def test_reply_refused_by_a_thread_gate_is_reply_forbidden(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    gated = {"error": "InvalidRequest", "message": "Reply not allowed by threadgate"}
    carol = carol_with_the_reply_failing(adapter, pds, httpx.Response(400, json=gated))

    with pytest.raises(ReplyForbidden):
        adapter.post_reply(carol, "Non.")
