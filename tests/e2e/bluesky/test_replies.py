"""The bot against Bluesky's reference network: what summons it, and how its reply is made.

Every scenario is set up by users through the SDK first; then the bot runs as a process
(`factnote run --once --mode live`, twice: the second shows nothing is answered twice and no
refusal is retried); each test reads back what the bot wrote from the PDS and what it recorded
in its database. One cycle for all keeps the suite inside its time budget (a cycle costs a
process start and a model load)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from storage.db import Database
from storage.models import ImageRow, Request
from testing.image_samples import encode, scene
from tests.e2e.bluesky.bot import CLAIM, CLAIM_2, FACT_CHECK_URL, Bot
from tests.e2e.bluesky.network import Network, Ref, User, posts_of, replies_to

pytestmark = [pytest.mark.bluesky_e2e, pytest.mark.timeout(900)]

LINK_FACET = "app.bsky.richtext.facet#link"


@dataclass
class World:
    net: Network
    bot: Bot
    me: User
    refs: dict[str, Ref] = field(default_factory=dict)
    runs: list[Any] = field(default_factory=list)  # CompletedProcess of each cycle

    def replies(self, name: str) -> list[dict[str, Any]]:
        return replies_to(self.net, self.me.did, self.refs[name])

    def request(self, name: str) -> Request | None:
        database = Database(f"sqlite:///{self.bot.database}")
        try:
            with database.session() as session:
                return session.scalars(
                    select(Request).where(Request.summons_id == self.refs[name].uri)
                ).one_or_none()
        finally:
            database.dispose()


def _cycle(world: World) -> None:
    done = world.bot.run_once()
    world.runs.append(done)
    assert done.returncode == 0, done.stdout + done.stderr


def _first_round(world: World, users: dict[str, User]) -> None:
    me, refs = world.me, world.refs
    asker, poster, other = users["asker"], users["poster"], users["other"]
    # A mention under a post.
    refs["claim"] = poster.post(CLAIM)
    refs["ask"] = asker.reply("is this true?", refs["claim"], refs["claim"], mention=me)
    # Notifications that are not summonses, on a post of the bot's own.
    refs["own"] = me.post("factnote checks claims against published fact-checks.")
    refs["plain_reply"] = other.reply("thanks, useful", refs["own"], refs["own"])
    refs["plain_quote"] = other.post("worth a read", quote=refs["own"])
    other.client.like(refs["own"].uri, refs["own"].cid)
    other.client.repost(refs["own"].uri, refs["own"].cid)
    other.client.follow(me.did)
    # A quote-post that mentions the bot: the quoted post is checked.
    refs["quoted"] = other.post(CLAIM)
    refs["quote_ask"] = asker.post("is this right?", mention=me, quote=refs["quoted"])
    # A long thread: root, two replies, the claim, and the question under it.
    refs["long_root"] = poster.post("Heard anything about flu remedies?")
    r1 = other.reply("Lots of stories going round.", refs["long_root"], refs["long_root"])
    r2 = poster.reply("Which ones?", refs["long_root"], r1)
    refs["long_claim"] = other.reply(CLAIM, refs["long_root"], r2)
    refs["long_ask"] = asker.reply("true?", refs["long_root"], refs["long_claim"], mention=me)
    # A thread whose gate lets only the accounts its root mentions reply (the asker, not us).
    refs["gated"] = poster.post(CLAIM, mention=asker)
    poster.gate_to_mentioned(refs["gated"])
    refs["gated_ask"] = asker.reply("true?", refs["gated"], refs["gated"], mention=me)
    # The post asked about, deleted before the bot comes to it.
    refs["gone"] = poster.post(CLAIM)
    refs["gone_ask"] = asker.reply("true?", refs["gone"], refs["gone"], mention=me)
    poster.client.delete_post(refs["gone"].uri)
    # An asker who then blocks the bot.
    blocker = users["blocker"]
    refs["block_ask"] = blocker.reply("true?", refs["claim"], refs["claim"], mention=me)
    blocker.block(me)
    # A post with an image, asked about.
    refs["pictured"] = poster.post(CLAIM, image=encode(scene(7), "JPEG"))
    refs["image_ask"] = asker.reply("true?", refs["pictured"], refs["pictured"], mention=me)


@pytest.fixture(scope="module")
def world(
    bluesky_net: Network, bot: Bot, bot_user: User, asker: User, poster: User
) -> Iterator[World]:
    users = {"asker": asker, "poster": poster}
    users |= {"other": User(bluesky_net, "olive"), "blocker": User(bluesky_net, "blocker")}
    world = World(bluesky_net, bot, bot_user)
    _first_round(world, users)
    _cycle(world)
    # Under the bot's own reply, a reply that does not tag it.
    [answer] = world.replies("ask")
    answer_ref = Ref(answer["uri"], answer["cid"])
    world.refs["untagged"] = asker.reply("ok, thanks", world.refs["claim"], answer_ref)
    _cycle(world)
    yield world


def _link_facet(record: dict[str, Any]) -> tuple[str, str]:
    """(the facet's uri, the text its byte range covers)."""
    [link] = [f for f in record.get("facets", []) if f["features"][0]["$type"] == LINK_FACET]
    start, end = link["index"]["byteStart"], link["index"]["byteEnd"]
    return link["features"][0]["uri"], record["text"].encode("utf-8")[start:end].decode("utf-8")


def _refs(record: dict[str, Any]) -> tuple[tuple[str, str], tuple[str, str]]:
    root, parent = record["reply"]["root"], record["reply"]["parent"]
    return (root["uri"], root["cid"]), (parent["uri"], parent["cid"])


def test_a_mention_under_a_post_gets_one_reply_with_its_link_facet_and_reply_refs(
    world: World,
) -> None:
    first, again = world.runs
    assert "posted 4," in first.stdout, first.stdout  # this, the quote, the thread, the image
    assert "posted 0," in again.stdout, again.stdout
    [reply] = world.replies("ask")
    record = reply["value"]
    claim, ask = world.refs["claim"], world.refs["ask"]
    assert _refs(record) == ((claim.uri, claim.cid), (ask.uri, ask.cid))
    uri, shown = _link_facet(record)
    assert uri == FACT_CHECK_URL
    # The visible text may be shortened, never something else.
    visible = shown.rstrip("…").rstrip(".")
    assert visible and FACT_CHECK_URL.removeprefix("https://").startswith(visible)


def test_reply_quote_like_repost_and_follow_notifications_never_summon(world: World) -> None:
    seen = world.me.client.app.bsky.notification.list_notifications({"limit": 100})
    reasons = {
        n.reason for n in seen.notifications if n.reason_subject in (None, world.refs["own"].uri)
    }
    # The network did notify the bot (the reply's own notification was missing from this list
    # in one run of three, unexplained, so it is not required here); none of them became a
    # request or a reply.
    assert {"quote", "like", "repost", "follow"} <= reasons
    for name in ("plain_reply", "plain_quote"):
        assert world.request(name) is None
        assert world.replies(name) == []


def test_an_untagged_reply_under_the_bots_reply_is_not_a_summons(world: World) -> None:
    assert world.request("untagged") is None
    assert world.replies("untagged") == []


def test_a_quote_post_that_mentions_the_bot_is_answered_about_the_quoted_post(
    world: World,
) -> None:
    [reply] = world.replies("quote_ask")
    ask = world.refs["quote_ask"]
    assert _refs(reply["value"]) == ((ask.uri, ask.cid), (ask.uri, ask.cid))
    assert _link_facet(reply["value"])[0] == FACT_CHECK_URL
    request = world.request("quote_ask")
    assert request is not None and request.target is not None
    assert request.target["id"] == world.refs["quoted"].uri


def test_a_mention_deep_in_a_thread_keeps_the_threads_root_and_its_parent(world: World) -> None:
    [reply] = world.replies("long_ask")
    root, ask = world.refs["long_root"], world.refs["long_ask"]
    assert _refs(reply["value"]) == ((root.uri, root.cid), (ask.uri, ask.cid))
    request = world.request("long_ask")
    assert request is not None and request.target is not None
    assert request.target["id"] == world.refs["long_claim"].uri


def test_a_thread_gate_that_excludes_the_bot_ends_as_a_recorded_refusal_not_a_retry(
    world: World,
) -> None:
    assert world.replies("gated_ask") == []
    request = world.request("gated_ask")
    # Read from the AppView's viewer.replyDisabled before anything was written: skipped with
    # the reason, never tried (post_attempts 0), and the second cycle left it so.
    assert request is not None
    assert (request.state, request.reason) == ("skipped", "replies are disabled on this thread")
    assert request.attempts == 0 and request.post_attempts == 0


def test_a_post_deleted_before_the_bot_answers_gets_no_reply_and_is_recorded(
    world: World,
) -> None:
    assert world.replies("gone_ask") == []
    request = world.request("gone_ask")
    assert request is not None
    assert (request.state, request.reason) == ("skipped", "target missing: parent post not found")


def test_an_asker_who_blocks_the_bot_gets_no_reply_and_nothing_fails(world: World) -> None:
    # The AppView drops a notification across a block (listNotifications.ts
    # `noBlockOrMutesOrNeedsFiltering`): nothing reaches the bot, nothing is posted.
    assert world.replies("block_ask") == []
    assert world.request("block_ask") is None
    assert all(done.returncode == 0 for done in world.runs)


def test_a_post_with_an_image_is_checked_with_the_image_the_appview_serves(
    world: World,
) -> None:
    request = world.request("image_ask")
    assert request is not None and request.target is not None
    [media] = request.target["media"]
    # The AppView's own image server (/img/<preset>/plain/<did>/<cid>), reached on loopback.
    prefix = (
        f"{world.net.appview}/img/feed_fullsize/plain/{world.refs['pictured'].uri.split('/')[2]}/"
    )
    assert media["url"].startswith(prefix) and media["kind"] == "photo"
    database = Database(f"sqlite:///{world.bot.database}")
    try:
        with database.session() as session:
            fetched = [r.source for r in session.scalars(select(ImageRow))]
    finally:
        database.dispose()
    assert media["url"] in fetched  # the bot fetched and stored the image from there
    [reply] = world.replies("image_ask")
    assert _link_facet(reply["value"])[0] == FACT_CHECK_URL


def test_every_reply_the_bot_wrote_answers_a_summons_once(world: World) -> None:
    assert _answered(world) == sorted(
        world.refs[name].uri for name in ("ask", "image_ask", "long_ask", "quote_ask")
    )


def test_the_bot_restarted_mid_post_finds_its_reply_and_never_posts_a_second(
    world: World,
) -> None:
    # What a process killed between createRecord and its commit leaves behind: the reply on
    # the PDS, the request still `posting` with its attempt counted and a lease nobody renews.
    database = Database(f"sqlite:///{world.bot.database}")
    try:
        with database.transaction() as session:
            row = session.scalars(
                select(Request).where(Request.summons_id == world.refs["quote_ask"].uri)
            ).one()
            assert row.state == "posted" and row.post_attempts == 1
            row.state, row.posted_at, row.reply_id = "posting", None, None
            row.next_attempt_at = None
            row.lease_until = datetime.now(UTC) - timedelta(minutes=10)
    finally:
        database.dispose()

    _cycle(world)

    request = world.request("quote_ask")
    assert request is not None and request.state == "posted" and request.reply_id
    [reply] = world.replies("quote_ask")
    assert request.reply_id == reply["uri"]


def test_the_bots_database_deleted_never_makes_a_second_reply(world: World) -> None:
    for suffix in ("", "-wal", "-shm"):
        world.bot.database.with_name(world.bot.database.name + suffix).unlink(missing_ok=True)

    _cycle(world)

    # The mentions were read again from scratch; every reply found by its record key.
    assert "posted 0," in world.runs[-1].stdout, world.runs[-1].stdout
    assert world.request("ask") is not None
    assert _answered(world) == sorted(
        world.refs[name].uri for name in ("ask", "image_ask", "long_ask", "quote_ask")
    )


def test_the_bot_keeps_reading_its_mentions_after_its_handle_changed(
    world: World, asker: User, poster: User
) -> None:
    world.me.client.update_handle("factnote-renamed.test")
    world.me.handle = "factnote-renamed.test"
    claim = world.refs["renamed_claim"] = poster.post(CLAIM_2)
    world.refs["renamed_ask"] = asker.reply("and now?", claim, claim, mention=world.me)

    _cycle(world)  # the deployment's settings still name the old handle; exit 0

    # Its stored session (by DID) still works, the mention of the new handle is read and
    # triaged like any other. (Answering it needs the claim index to match CLAIM_2 strongly
    # enough for the templated reply; in these runs it ended `needs_llm`, see the report.)
    request = world.request("renamed_ask")
    assert request is not None and request.target is not None
    assert request.target["id"] == claim.uri
    assert request.state not in ("skipped", "failed", "retry"), (request.state, request.reason)
    assert "error" not in world.runs[-1].stdout.split("expired")[0]


def _answered(world: World) -> list[str]:
    """The post each of the bot's replies answers, sorted; a post answered twice is listed
    twice."""
    return sorted(
        p["value"]["reply"]["parent"]["uri"]
        for p in posts_of(world.net, world.me.did)
        if p["value"].get("reply")
    )
