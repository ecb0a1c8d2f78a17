"""Bluesky summons in: `listNotifications` paging, the overlap cursor and `updateSeen`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
from sqlalchemy import select

from adapters.bluesky.adapter import BlueskyAdapter
from storage.db import Database
from storage.models import Request as RequestRow
from tests.adapters.bluesky.helpers import (
    ALICE,
    CAROL,
    DAVE,
    ERIN,
    FRANK,
    GINA,
    FakePDS,
    load,
)

# A reply to Dave's reply under our post (a grandchild of ours), and a quote of our post.
IVAN = "at://did:plc:ivan2cd5ef8gh1ij4kl7mn0p/app.bsky.feed.post/3livangrand5r"
JUDY = "at://did:plc:judy6gh9ij2kl5mn8op1qr4s/app.bsky.feed.post/3ljudyquote6s"


# ------------------------------------------------------------------ notifications and cursor


def test_fetch_pages_back_to_the_cursor_and_returns_new_summons_oldest_first(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    result = adapter.fetch_summons("2026-03-01T09:30:00.000Z")

    listed = pds.named("app.bsky.notification.listNotifications")
    assert len(listed) == 2
    assert listed[0].params.get("cursor") is None
    assert listed[1].params["cursor"] == "2026-03-01T10:02:59.100Z"
    assert listed[0].params.get_list("reasons") == ["mention"]
    assert listed[0].params["limit"] == "100"
    assert [s.id for s in result.summons] == [GINA, FRANK, ERIN, ALICE, DAVE, CAROL]
    assert result.cursor == "2026-03-01T10:05:00.000Z"


# notifications_not_summons.json: a page of likes, reposts, follows, a reply and a quote
# that the AppView reads and then filters out for reasons=mention (@atproto/bsky 0.0.280 as
# installed by tools/ensure-bluesky-net.sh, dist/api/app/bsky/notification/listNotifications.js
# lines 41-55 `paginateNotifications`: the `reasons` filter runs on the page the data plane
# returned, whose cursor is kept; dist/api/util.js lines 19-46 `fillPage` refills at most 10
# times). Its cursor is the sort time of the last notification read
# (dist/data-plane/server/db/pagination.js lines 214-236, `IsoTimeKey`/`IsoSortAtKey`).
NOT_SUMMONS = "notifications_not_summons.json"


def test_an_empty_page_with_a_cursor_is_paged_past_to_the_mentions_behind_it(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    pds.notification_pages = [NOT_SUMMONS, "notifications_page1.json", "notifications_page2.json"]

    result = adapter.fetch_summons("2026-03-01T09:30:00.000Z")

    listed = pds.named("app.bsky.notification.listNotifications")
    assert [c.params.get("cursor") for c in listed] == [
        None,
        "2026-03-01T10:06:00.000Z",
        "2026-03-01T10:02:59.100Z",
    ]
    assert [s.id for s in result.summons] == [GINA, FRANK, ERIN, ALICE, DAVE, CAROL]
    assert result.cursor == "2026-03-01T10:05:00.000Z"


def test_a_first_run_pages_past_empty_pages_to_the_newest_summonses_only(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    pds.notification_pages = [NOT_SUMMONS, "notifications_page1.json", "notifications_page2.json"]

    result = adapter.fetch_summons(None)

    assert len(pds.named("app.bsky.notification.listNotifications")) == 2
    assert [s.id for s in result.summons] == [ALICE, DAVE, CAROL]


def test_an_empty_page_whose_cursor_is_behind_ours_ends_the_paging(
    make_adapter: Callable[..., BlueskyAdapter], pds: FakePDS
) -> None:
    pds.notification_pages = [NOT_SUMMONS, "notifications_page1.json"]

    result = make_adapter(overlap=timedelta(0)).fetch_summons("2026-03-01T10:07:30.000Z")

    assert len(pds.named("app.bsky.notification.listNotifications")) == 1
    assert result.summons == [] and result.cursor is None


def test_every_notification_read_asks_for_priority_false(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    # Without it the AppView applies the account's own "priority notifications" setting
    # (dist/api/app/bsky/notification/listNotifications.js line 22: `params.priority ?? (await
    # getPriority(ctx, viewer))`, lines 174-179), and an account with it on hears only from
    # accounts it follows (dist/data-plane/server/routes/notifs.js line 29). The SDK's lexicon
    # calls the parameter ignored; the AppView's code does not.
    adapter.fetch_summons("2026-03-01T09:30:00.000Z")

    listed = pds.named("app.bsky.notification.listNotifications")
    assert listed and all(c.params.get("priority") == "false" for c in listed)


def test_fetch_stops_at_the_first_page_when_the_cursor_is_on_it(
    make_adapter: Callable[..., BlueskyAdapter], pds: FakePDS
) -> None:
    adapter = make_adapter(overlap=timedelta(0))

    result = adapter.fetch_summons("2026-03-01T10:02:59.100Z")

    assert len(pds.named("app.bsky.notification.listNotifications")) == 1
    assert [s.id for s in result.summons] == [DAVE, CAROL]
    assert result.cursor == "2026-03-01T10:05:00.000Z"


def test_fetch_with_nothing_new_keeps_the_cursor_and_marks_nothing_seen(
    make_adapter: Callable[..., BlueskyAdapter], pds: FakePDS
) -> None:
    result = make_adapter(overlap=timedelta(0)).fetch_summons("2026-03-01T10:05:00.000Z")

    assert result.summons == []
    assert result.cursor is None
    assert pds.named("app.bsky.notification.updateSeen") == []


def test_a_mention_sorted_behind_the_cursor_is_read_through_the_overlap(
    make_adapter: Callable[..., BlueskyAdapter], pds: FakePDS
) -> None:
    # Erin, Frank and Gina sort (min of createdAt and indexedAt) up to 2.5 minutes behind a
    # cursor taken at 10:02:30: posts created before that poll and indexed after it.
    cursor = "2026-03-01T10:02:30.000Z"

    late = make_adapter().fetch_summons(cursor)
    strict = make_adapter(overlap=timedelta(0)).fetch_summons(cursor)

    assert [s.id for s in late.summons] == [GINA, FRANK, ERIN, ALICE, DAVE, CAROL]
    assert [s.id for s in strict.summons] == [ALICE, DAVE, CAROL]
    assert late.cursor == strict.cursor == "2026-03-01T10:05:00.000Z"


def test_only_the_overlap_read_again_keeps_the_cursor_and_marks_nothing_seen(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    result = adapter.fetch_summons("2026-03-01T10:05:00.000Z")

    assert {s.id for s in result.summons} == {GINA, FRANK, ERIN, ALICE, DAVE, CAROL}
    assert result.cursor is None
    assert pds.named("app.bsky.notification.updateSeen") == []


def test_overlap_repeats_are_not_resolved_again_once_the_runtime_stored_the_cursor(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    first = adapter.fetch_summons("2026-03-01T09:30:00.000Z")
    resolved = len(pds.named("app.bsky.feed.getPostThread"))

    # The runtime did not store the first result (old cursor again): everything comes back.
    again = adapter.fetch_summons("2026-03-01T09:30:00.000Z")
    # It stored it: the overlap finds the same posts and returns none of them.
    stored = adapter.fetch_summons(first.cursor)

    assert [s.id for s in again.summons] == [s.id for s in first.summons]
    assert stored.summons == [] and stored.cursor is None
    assert len(pds.named("app.bsky.feed.getPostThread")) == 2 * resolved


def test_overlap_repeats_after_a_restart_make_no_second_request(
    make_adapter: Callable[..., BlueskyAdapter], db: Database
) -> None:
    from bot.requests.intake import poll

    first = poll(make_adapter(), db, "dry-run")  # no cursor yet: the newest page only
    # New processes remember nothing: the overlap returns what was stored again.
    second = poll(make_adapter(), db, "dry-run")
    third = poll(make_adapter(), db, "dry-run")

    assert (first.seen, first.new, first.error) == (3, 3, None)
    assert (second.seen, second.new, second.error) == (6, 3, None)  # 3 sorted behind
    assert (third.seen, third.new, third.error) == (6, 0, None)
    with db.session() as session:
        ids = session.scalars(select(RequestRow.summons_id)).all()
    assert sorted(ids) == sorted([ALICE, DAVE, CAROL, ERIN, FRANK, GINA])


def test_first_fetch_without_cursor_reads_one_page_only(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    result = adapter.fetch_summons(None)

    assert len(pds.named("app.bsky.notification.listNotifications")) == 1
    assert [s.id for s in result.summons] == [ALICE, DAVE, CAROL]


@pytest.mark.parametrize("server_filters", [True, False])
def test_a_grandchild_reply_and_a_quote_of_our_post_are_not_summons(
    make_adapter: Callable[..., BlueskyAdapter], pds: FakePDS, server_filters: bool
) -> None:
    pds.honour_reasons = server_filters

    ids = [s.id for s in make_adapter().fetch_summons("2026-03-01T09:30:00.000Z").summons]

    assert IVAN not in ids and JUDY not in ids
    assert ids == [GINA, FRANK, ERIN, ALICE, DAVE, CAROL]
    listed = pds.named("app.bsky.notification.listNotifications")[0]
    assert listed.params.get_list("reasons") == ["mention"]


def test_a_reply_notification_whose_record_mentions_us_is_a_summons(
    adapter: BlueskyAdapter, pds: FakePDS, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not what the AppView sends today (the mention wins), but such a record did tag us.
    pds.honour_reasons = False
    page = load("notifications_page1.json")
    for note in page["notifications"]:
        if note["uri"] in (DAVE, IVAN):
            note["reason"] = "reply"
    monkeypatch.setattr(
        pds,
        "_listNotifications",
        lambda request, body: pds._json(200, page | {"cursor": None}),
    )

    ids = [s.id for s in adapter.fetch_summons("2026-03-01T09:30:00.000Z").summons]

    assert DAVE in ids and IVAN not in ids


def test_update_seen_uses_a_time_taken_before_listing(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    adapter.fetch_summons("2026-03-01T09:30:00.000Z")

    (seen,) = pds.named("app.bsky.notification.updateSeen")
    first_list = pds.named("app.bsky.notification.listNotifications")[0]
    assert seen.body is not None
    assert datetime.fromisoformat(seen.body["seenAt"]) <= first_list.at


def test_an_unparseable_cursor_is_refused(adapter: BlueskyAdapter) -> None:
    with pytest.raises(ValueError, match="not a Bluesky cursor"):
        adapter.fetch_summons("3lpage-token")


def test_notification_fixtures_never_carry_an_indexed_at_after_their_created_at() -> None:
    # The AppView sends a notification's sort time as its indexedAt: the earlier of the record's
    # createdAt and the time it was indexed (@atproto/bsky 0.0.280,
    # dist/data-plane/server/indexing/plugins/post.js line 45 `sortAt`, carried to each
    # notification by `notifsForInsert`, line 253; dist/views/index.js line 2023 sends
    # `notif.timestamp`). So a notification whose indexedAt is later than its record's
    # createdAt cannot happen (an earlier one can: a createdAt ahead of the indexing clock).
    from tests.adapters.bluesky.helpers import FIXTURES

    for path in sorted(FIXTURES.glob("notifications_*.json")):
        for note in load(path.name)["notifications"]:
            record, indexed = note.get("record"), note.get("indexedAt")
            created = record.get("createdAt") if isinstance(record, dict) else None
            if isinstance(created, str) and isinstance(indexed, str) and indexed[:2] == "20":
                assert datetime.fromisoformat(indexed) <= datetime.fromisoformat(created), (
                    path.name,
                    note.get("uri"),
                )
