"""The Bluesky adapter against a real `atproto.Client` whose transport is an httpx MockTransport.

The fake PDS answers XRPC endpoints by NSID with response bodies from tests/fixtures/bluesky,
issues and checks its own tokens, counts logins and records every request.

Where the shapes come from (tests/fixtures/bluesky/SOURCES.md lists each file):
- Response bodies follow the lexicons as generated into the SDK: atproto_client/models/app/bsky/
  notification/list_notifications.py (Notification), app/bsky/feed/defs.py (ThreadViewPost,
  PostView, ViewerState.reply_disabled), com/atproto/repo/{create,get,list}_record.py.
- Which notifications exist follows the AppView's indexer (bluesky-social/atproto,
  packages/bsky/src/data-plane/server/indexing/plugins/post.ts, `notifsForInsert`): a mention
  facet gives `mention` and wins over `reply`/`quote` for the same DID; `reply` goes to ancestors,
  `quote` to the quoted post's author; listNotifications filters by its `reasons` parameter.
- The repo endpoints follow the PDS (packages/pds/src/api/com/atproto/repo/createRecord.ts,
  getRecord.ts, listRecords.ts): a create on an existing key fails inside the MST add ("There is
  already a value at key"), which the XRPC server answers as 500 InternalServerError; getRecord
  on a missing key is 400 RecordNotFound; listRecords returns newest keys first with the last key
  as cursor.
"""

from __future__ import annotations

import base64
import json
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from atproto import Client, Request, Session
from atproto_client.models.string_formats import TID_RE
from sqlalchemy import select
from typer.testing import CliRunner

from adapters.base import (
    AccessDenied,
    Adapter,
    PlatformError,
    RateLimited,
    ReplyForbidden,
    Summons,
    TargetStatus,
)
from adapters.bluesky import (
    BlueskyAdapter,
    BlueskyConfigError,
    BlueskyCredentials,
    ReplyTooLong,
    link_label,
    reply_record_key,
)
from storage.db import Database
from storage.models import Request as RequestRow

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bluesky"
PDS = "https://pds.test"
BOT_DID = "did:plc:fnbot7x3k2m4q5r6s7t8u9v"
BOT_HANDLE = "factnote.bsky.social"
PASSWORD = "abcd-efgh-ijkl-mnop"
RESET_EPOCH = 1772400000

ALICE = "at://did:plc:alice2nd5p8q1r4s7t0u3v6w/app.bsky.feed.post/3lalicement3c"
BOB_ROOT = "at://did:plc:bob4rkq2m7zv1c9w3x5y8t6a/app.bsky.feed.post/3lbobroot2aa1"
BOB_REPLY = "at://did:plc:bob4rkq2m7zv1c9w3x5y8t6a/app.bsky.feed.post/3lbobreply2b2"
CAROL = "at://did:plc:carol6hj9k2l5m8n1p4q7r0s/app.bsky.feed.post/3lcarolquot5e"
DAN_CLAIM = "at://did:plc:dan3wx6yz9ab2cd5ef8gh1ij/app.bsky.feed.post/3ldanclaim4d4"
DAVE = "at://did:plc:dave8mn1op4qr7st0uv3wx6y/app.bsky.feed.post/3ldavereply7g"
ERIN = "at://did:plc:erin5ab8cd1ef4gh7ij0kl3m/app.bsky.feed.post/3lerinmenti9i"
FRANK = "at://did:plc:frank9no2pq5rs8tu1vw4xy7/app.bsky.feed.post/3lfrankment1k"
GINA = "at://did:plc:gina4yz7ab0cd3ef6gh9ij2k/app.bsky.feed.post/3lginachart2l"
# A reply to Dave's reply under our post (a grandchild of ours), and a quote of our post.
IVAN = "at://did:plc:ivan2cd5ef8gh1ij4kl7mn0p/app.bsky.feed.post/3livangrand5r"
JUDY = "at://did:plc:judy6gh9ij2kl5mn8op1qr4s/app.bsky.feed.post/3ljudyquote6s"
POSTS = "app.bsky.feed.post"
HEALTH = "health.example.gov"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return data


def _b64(data: dict[str, Any]) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def make_jwt(sub: str, *, expires_in: int, scope: str, serial: int) -> str:
    now = int(time.time())
    header = {"typ": "at+jwt", "alg": "ES256K"}
    payload = {"scope": scope, "sub": sub, "aud": "did:web:pds.test", "iat": now}
    payload |= {"exp": now + expires_in, "jti": f"t{serial}"}
    return f"{_b64(header)}.{_b64(payload)}.c2lnbmF0dXJl"


@dataclass
class Call:
    nsid: str
    method: str
    params: httpx.QueryParams
    body: dict[str, Any] | None
    auth: str | None
    at: datetime


@dataclass
class FakePDS:
    """An XRPC server in-process: tokens, notifications, threads, feeds, a profile record."""

    calls: list[Call] = field(default_factory=list)
    access: set[str] = field(default_factory=set)
    refresh: set[str] = field(default_factory=set)
    serial: int = 0
    failures: dict[str, list[httpx.Response | Exception]] = field(default_factory=dict)
    profile: dict[str, Any] = field(default_factory=lambda: load("profile_record.json"))
    threads: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Our repo's app.bsky.feed.post records by record key: {uri, cid, value}.
    posts: dict[str, dict[str, Any]] = field(default_factory=dict)
    honour_reasons: bool = True  # as the AppView does; False plays a server that ignores it
    lose_next_create_answer: bool = False  # store the record, then drop the connection
    notifications_file: str | None = None  # serve this listNotifications page instead

    def __post_init__(self) -> None:
        for path in sorted(FIXTURES.glob("thread_*.json")):
            body = load(path.name)
            self.threads[body["thread"]["post"]["uri"]] = body
        for record in load("list_records_bot_posts.json")["records"]:
            self.posts[record["uri"].rsplit("/", 1)[-1]] = record

    # -- helpers for tests
    def issue(self, *, access_ttl: int = 7200) -> tuple[str, str]:
        self.serial += 1
        access = make_jwt(
            BOT_DID, expires_in=access_ttl, scope="com.atproto.appPass", serial=self.serial
        )
        refresh = make_jwt(
            BOT_DID, expires_in=86400 * 60, scope="com.atproto.refresh", serial=self.serial
        )
        self.access.add(access)
        self.refresh.add(refresh)
        return access, refresh

    def session_string(self, *, access_ttl: int = 7200) -> str:
        access, refresh = self.issue(access_ttl=access_ttl)
        return Session(BOT_HANDLE, BOT_DID, access, refresh, f"{PDS}/xrpc").encode()

    def revoke_all(self) -> None:
        self.access.clear()
        self.refresh.clear()

    def fail(self, nsid: str, *responses: httpx.Response | Exception) -> None:
        self.failures.setdefault(nsid, []).extend(responses)

    def named(self, nsid: str) -> list[Call]:
        return [c for c in self.calls if c.nsid == nsid]

    def client(self) -> Client:
        return Client(base_url=PDS, request=Request(transport=httpx.MockTransport(self.handle)))

    # -- the server
    def handle(self, request: httpx.Request) -> httpx.Response:
        nsid = request.url.path.removeprefix("/xrpc/")
        body = json.loads(request.content) if request.content else None
        auth = request.headers.get("authorization")
        self.calls.append(
            Call(nsid, request.method, request.url.params, body, auth, datetime.now(UTC))
        )
        pending = self.failures.get(nsid)
        if pending:
            failure = pending.pop(0)
            if isinstance(failure, Exception):
                raise failure
            return failure
        if nsid == "com.atproto.server.createSession":
            return self._create_session(body or {})
        if nsid == "com.atproto.server.refreshSession":
            return self._refresh_session(auth)
        if auth is None or auth.removeprefix("Bearer ") not in self.access:
            return self._error(400, "ExpiredToken", "Token has expired")
        route: Callable[[httpx.Request, dict[str, Any] | None], httpx.Response] = getattr(
            self, "_" + nsid.rsplit(".", 1)[-1], self._unknown
        )
        return route(request, body)

    def _json(self, status: int, body: dict[str, Any]) -> httpx.Response:
        remaining = max(0, 3000 - len(self.calls))
        headers = {
            "ratelimit-limit": "3000",
            "ratelimit-remaining": str(remaining),
            "ratelimit-reset": str(RESET_EPOCH),
            "ratelimit-policy": "3000;w=300",
        }
        # Encoded as a JavaScript server does (JSON.stringify): non-ASCII and lone surrogates
        # as \u escapes, which httpx's own `json=` (UTF-8, no escapes) cannot send.
        headers["content-type"] = "application/json; charset=utf-8"
        return httpx.Response(status, content=json.dumps(body).encode(), headers=headers)

    def _error(self, status: int, error: str, message: str) -> httpx.Response:
        return self._json(status, {"error": error, "message": message})

    def _unknown(self, request: httpx.Request, body: Any) -> httpx.Response:
        return self._error(501, "MethodNotImplemented", f"no route for {request.url.path}")

    def _create_session(self, body: dict[str, Any]) -> httpx.Response:
        if body.get("identifier") != BOT_HANDLE or body.get("password") != PASSWORD:
            return self._error(401, "AuthenticationRequired", "Invalid identifier or password")
        access, refresh = self.issue()
        return self._json(
            200, load("create_session.json") | {"accessJwt": access, "refreshJwt": refresh}
        )

    def _refresh_session(self, auth: str | None) -> httpx.Response:
        token = (auth or "").removeprefix("Bearer ")
        if token not in self.refresh:
            return self._error(400, "ExpiredToken", "Token has expired")
        self.refresh.discard(token)
        access, refresh = self.issue()
        return self._json(
            200, {"accessJwt": access, "refreshJwt": refresh, "handle": BOT_HANDLE, "did": BOT_DID}
        )

    def _listNotifications(self, request: httpx.Request, body: Any) -> httpx.Response:
        cursor = request.url.params.get("cursor")
        if self.notifications_file is not None:
            page = load(self.notifications_file) if cursor is None else {"notifications": []}
        elif cursor is None:
            page = load("notifications_page1.json")
        elif cursor == load("notifications_page1.json")["cursor"]:
            page = load("notifications_page2.json")
        else:
            page = {"notifications": []}
        reasons = request.url.params.get_list("reasons")
        if self.honour_reasons and reasons:
            page["notifications"] = [n for n in page["notifications"] if n["reason"] in reasons]
        return self._json(200, page)

    def _updateSeen(self, request: httpx.Request, body: Any) -> httpx.Response:
        return httpx.Response(200)

    def _getPostThread(self, request: httpx.Request, body: Any) -> httpx.Response:
        uri = request.url.params["uri"]
        if uri in self.threads:
            return self._json(200, self.threads[uri])
        return self._error(400, "NotFound", f"Post not found: {uri}")

    def _getPosts(self, request: httpx.Request, body: Any) -> httpx.Response:
        views = {}
        for thread in self.threads.values():
            node: dict[str, Any] | None = thread["thread"]
            while node is not None and "post" in node:
                views[node["post"]["uri"]] = node["post"]
                node = node.get("parent")
        wanted = request.url.params.get_list("uris")
        return self._json(200, {"posts": [views[u] for u in wanted if u in views]})

    def _createRecord(self, request: httpx.Request, body: Any) -> httpx.Response:
        assert body is not None and body["repo"] == BOT_DID
        rkey = body.get("rkey") or f"3lnew{len(self.calls):08d}"
        if rkey in self.posts:
            # The MST refuses a second value at a key; the XRPC server hides the message.
            return self._error(500, "InternalServerError", "Internal Server Error")
        uri = f"at://{BOT_DID}/{body['collection']}/{rkey}"
        cid = f"bafyreid{rkey}qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq"
        self.posts[rkey] = {"uri": uri, "cid": cid, "value": body["record"]}
        if self.lose_next_create_answer:
            self.lose_next_create_answer = False
            raise httpx.ReadTimeout("the answer was lost", request=request)
        return self._json(200, load("create_record.json") | {"uri": uri, "cid": cid})

    def _listRecords(self, request: httpx.Request, body: Any) -> httpx.Response:
        params = request.url.params
        assert (params["repo"], params["collection"]) == (BOT_DID, POSTS)
        limit = int(params.get("limit", "50"))
        keys = sorted(self.posts, reverse=True)
        if params.get("cursor"):
            keys = [k for k in keys if k < params["cursor"]]
        page = keys[:limit]
        out: dict[str, Any] = {"records": [self.posts[k] for k in page]}
        if len(keys) > limit:
            out["cursor"] = page[-1]
        return self._json(200, out)

    def _getAuthorFeed(self, request: httpx.Request, body: Any) -> httpx.Response:
        actor = request.url.params["actor"]
        if actor == HEALTH:
            page1 = load("author_feed_health_page1.json")
            if request.url.params.get("cursor") == page1["cursor"]:
                return self._json(200, load("author_feed_health_page2.json"))
            return self._json(200, page1)
        return self._error(400, "InvalidRequest", "Profile not found")

    def _getRecord(self, request: httpx.Request, body: Any) -> httpx.Response:
        params = request.url.params
        if params["collection"] == "app.bsky.actor.profile":
            return self._json(200, self.profile)
        if params["repo"] == BOT_DID and params["rkey"] in self.posts:
            return self._json(200, self.posts[params["rkey"]])
        uri = f"at://{params['repo']}/{params['collection']}/{params['rkey']}"
        return self._error(400, "RecordNotFound", f"Could not locate record: {uri}")

    def _putRecord(self, request: httpx.Request, body: Any) -> httpx.Response:
        assert body is not None
        if body.get("swapRecord") != self.profile["cid"]:
            return self._error(400, "InvalidSwap", "Record was at a different cid")
        new_cid = f"bafyreiprofile{len(self.calls)}"
        self.profile = {"uri": self.profile["uri"], "cid": new_cid, "value": body["record"]}
        return self._json(200, {"uri": self.profile["uri"], "cid": new_cid})


@pytest.fixture
def pds() -> FakePDS:
    return FakePDS()


@pytest.fixture
def creds() -> BlueskyCredentials:
    return BlueskyCredentials(handle=BOT_HANDLE, app_password=PASSWORD, pds=PDS)


@pytest.fixture
def make_adapter(
    pds: FakePDS, creds: BlueskyCredentials, tmp_path: Path
) -> Callable[..., BlueskyAdapter]:
    def build(**kwargs: Any) -> BlueskyAdapter:
        kwargs.setdefault("session_path", tmp_path / "state" / "bluesky.session")
        return BlueskyAdapter(creds, client=pds.client(), **kwargs)

    return build


@pytest.fixture
def adapter(make_adapter: Callable[..., BlueskyAdapter]) -> BlueskyAdapter:
    return make_adapter()


def fetch_all(adapter: BlueskyAdapter) -> dict[str, Summons]:
    result = adapter.fetch_summons("2026-03-01T09:30:00.000Z")
    return {s.id: s for s in result.summons}


# ------------------------------------------------------------------ credentials


def test_credentials_come_from_env_and_hide_the_password() -> None:
    creds = BlueskyCredentials.from_env(
        {"FACTNOTE_BLUESKY_HANDLE": "@bot.example", "FACTNOTE_BLUESKY_APP_PASSWORD": PASSWORD}
    )
    assert (creds.handle, creds.pds) == ("bot.example", "https://bsky.social")
    assert PASSWORD not in repr(creds)
    with pytest.raises(BlueskyConfigError, match="FACTNOTE_BLUESKY_APP_PASSWORD"):
        BlueskyCredentials.from_env({"FACTNOTE_BLUESKY_HANDLE": "bot.example"})


def test_adapter_satisfies_the_adapter_protocol(adapter: BlueskyAdapter) -> None:
    assert isinstance(adapter, Adapter)
    assert adapter.name == "bluesky"


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
    from bot.intake import poll

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
    assert alice.created_at == datetime(2026, 3, 1, 10, 2, 58, tzinfo=UTC)


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
    from bot.intake import poll
    from storage.models import Cursor

    pds.notifications_file = "notifications_bad_input.json"
    result = poll(adapter, db, "dry-run")

    assert result.error is None and result.new == 7
    with db.session() as session:
        rows = {r.summons_id: r for r in session.scalars(select(RequestRow))}
        cursor = session.get(Cursor, "bluesky")
    assert NED in rows and cursor is not None and cursor.cursor == "2026-03-01T11:05:00.000Z"

    from bot.config import RuntimeConfig
    from bot.triage import triage_pending

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


# ------------------------------------------------------------------ session


def test_without_a_stored_session_logs_in_once_and_stores_it_privately(
    make_adapter: Callable[..., BlueskyAdapter], pds: FakePDS, tmp_path: Path
) -> None:
    adapter = make_adapter()
    adapter.fetch_summons("2026-03-01T10:02:59.100Z")
    adapter.recent_posts(HEALTH, limit=2)

    assert len(pds.named("com.atproto.server.createSession")) == 1
    path = tmp_path / "state" / "bluesky.session"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    stored = Session.decode(path.read_text())
    assert (stored.did, stored.handle) == (BOT_DID, BOT_HANDLE)
    assert stored.access_jwt in pds.access
    assert PASSWORD not in path.read_text()
    assert list(path.parent.glob("*.tmp")) == []


def test_a_working_stored_session_is_reused_without_login(
    make_adapter: Callable[..., BlueskyAdapter], pds: FakePDS, tmp_path: Path
) -> None:
    path = tmp_path / "state" / "bluesky.session"
    path.parent.mkdir()
    path.write_text(pds.session_string())
    stored = Session.decode(path.read_text())

    make_adapter().fetch_summons("2026-03-01T10:02:59.100Z")

    assert pds.named("com.atproto.server.createSession") == []
    listed = pds.named("app.bsky.notification.listNotifications")[0]
    assert listed.auth == f"Bearer {stored.access_jwt}"


def test_an_expiring_stored_session_is_refreshed_not_recreated(
    make_adapter: Callable[..., BlueskyAdapter], pds: FakePDS, tmp_path: Path
) -> None:
    path = tmp_path / "state" / "bluesky.session"
    path.parent.mkdir()
    old = pds.session_string(access_ttl=60)  # inside the client's 15-minute refresh window
    path.write_text(old)

    make_adapter().recent_posts(HEALTH, limit=1)

    assert pds.named("com.atproto.server.createSession") == []
    assert len(pds.named("com.atproto.server.refreshSession")) == 1
    assert path.read_text() != old
    assert Session.decode(path.read_text()).access_jwt in pds.access
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_a_stored_session_of_another_account_or_garbage_is_not_used(
    make_adapter: Callable[..., BlueskyAdapter], pds: FakePDS, tmp_path: Path
) -> None:
    path = tmp_path / "state" / "bluesky.session"
    path.parent.mkdir()
    path.write_text("not a session")
    make_adapter().recent_posts(HEALTH, limit=1)
    foreign = Session("someone.else", "did:plc:other", *pds.issue(), f"{PDS}/xrpc").encode()
    path.write_text(foreign)
    make_adapter().recent_posts(HEALTH, limit=1)

    assert len(pds.named("com.atproto.server.createSession")) == 2


def test_a_rejected_session_is_replaced_by_one_password_login(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    adapter.recent_posts(HEALTH, limit=1)
    pds.revoke_all()

    posts = adapter.recent_posts(HEALTH, limit=1)

    assert len(posts) == 1
    assert len(pds.named("com.atproto.server.createSession")) == 2
    assert adapter.relogins == 1


def test_after_a_refused_login_the_adapter_stops_logging_in(pds: FakePDS, tmp_path: Path) -> None:
    creds = BlueskyCredentials(handle=BOT_HANDLE, app_password="wrong", pds=PDS)
    adapter = BlueskyAdapter(creds, session_path=tmp_path / "s", client=pds.client())
    assert adapter.login_halted is None

    with pytest.raises(AccessDenied) as first:
        adapter.recent_posts(HEALTH)
    with pytest.raises(AccessDenied) as second:
        adapter.fetch_summons(None)

    # createSession allows 30 per 5 minutes and 300 a day: one refused try is enough.
    assert len(pds.named("com.atproto.server.createSession")) == 1
    assert first.value.status == 401
    assert adapter.login_halted is not None and "refused" in adapter.login_halted
    assert "restart" in str(second.value)
    assert PASSWORD not in str(second.value) and "wrong" not in str(second.value)
    assert not (tmp_path / "s").exists()


def test_a_server_error_at_login_does_not_stop_logging_in(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    pds.fail("com.atproto.server.createSession", pds._error(502, "UpstreamFailure", "down"))

    with pytest.raises(PlatformError) as info:
        adapter.recent_posts(HEALTH, limit=1)
    posts = adapter.recent_posts(HEALTH, limit=1)

    assert info.value.retryable and not isinstance(info.value, AccessDenied)
    assert adapter.login_halted is None
    assert len(posts) == 1
    assert len(pds.named("com.atproto.server.createSession")) == 2


def test_factnote_status_shows_a_stopped_login(pds: FakePDS, tmp_path: Path, db: Database) -> None:
    from bot.intake import poll
    from bot.summary import overview

    creds = BlueskyCredentials(handle=BOT_HANDLE, app_password="wrong", pds=PDS)
    adapter = BlueskyAdapter(creds, session_path=tmp_path / "s", client=pds.client())

    poll(adapter, db, "dry-run")
    poll(adapter, db, "dry-run")

    (row,) = overview(db).polls
    assert row.adapter == "bluesky"
    assert row.last_error is not None
    assert row.last_error.startswith("AccessDenied") and "not logging in again" in row.last_error
    assert len(pds.named("com.atproto.server.createSession")) == 1


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


def test_rate_limited_reply_raises_with_the_reset_time_and_never_sleeps(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    carol = fetch_all(adapter)[CAROL]
    pds.fail(
        "com.atproto.repo.createRecord",
        httpx.Response(
            429,
            json={"error": "RateLimitExceeded", "message": "Rate Limit Exceeded"},
            headers={
                "ratelimit-limit": "5000",
                "ratelimit-remaining": "0",
                "ratelimit-reset": str(RESET_EPOCH),
            },
        ),
    )

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
    carol = fetch_all(adapter)[CAROL]
    pds.fail("com.atproto.repo.createRecord", failure)

    with pytest.raises(PlatformError) as info:
        adapter.post_reply(carol, "Non.")

    assert not isinstance(info.value, ReplyForbidden)
    assert info.value.retryable is retryable
    if status is not None:
        assert info.value.status == status


def test_reply_refused_by_a_thread_gate_is_reply_forbidden(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    carol = fetch_all(adapter)[CAROL]
    pds.fail(
        "com.atproto.repo.createRecord",
        httpx.Response(
            400, json={"error": "InvalidRequest", "message": "Reply not allowed by threadgate"}
        ),
    )

    with pytest.raises(ReplyForbidden):
        adapter.post_reply(carol, "Non.")


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


# ------------------------------------------------------------------ setup bluesky


def test_bot_label_is_added_keeping_the_profile_and_is_idempotent(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    original = load("profile_record.json")

    first = adapter.ensure_bot_label()
    second = adapter.ensure_bot_label()

    assert first.changed is True and second.changed is False
    (put,) = pds.named("com.atproto.repo.putRecord")
    assert put.body is not None
    assert put.body["swapRecord"] == original["cid"]
    assert (put.body["repo"], put.body["collection"], put.body["rkey"]) == (
        BOT_DID,
        "app.bsky.actor.profile",
        "self",
    )
    record = put.body["record"]
    for key in ("displayName", "description", "avatar", "createdAt"):
        assert record[key] == original["value"][key]
    assert record["labels"]["$type"] == "com.atproto.label.defs#selfLabels"
    assert [v["val"] for v in record["labels"]["values"]] == ["!no-unauthenticated", "bot"]
    assert second.labels == ["!no-unauthenticated", "bot"]


def test_setup_bluesky_command_labels_the_account(
    pds: FakePDS, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import adapters.bluesky.client as bluesky_module
    from bot.commands import setup

    transport = httpx.MockTransport(pds.handle)
    monkeypatch.setattr(bluesky_module, "Request", lambda **kw: Request(transport=transport, **kw))
    env = {
        "FACTNOTE_BLUESKY_HANDLE": BOT_HANDLE,
        "FACTNOTE_BLUESKY_APP_PASSWORD": PASSWORD,
        "FACTNOTE_BLUESKY_PDS": PDS,
    }
    args = ["bluesky", "--session-path", str(tmp_path / "bsky.session")]
    runner = CliRunner()

    first = runner.invoke(setup.app, [*args, "--json"], env=env)
    second = runner.invoke(setup.app, args, env=env)

    assert first.exit_code == 0, first.output
    assert json.loads(first.output) == {
        "did": BOT_DID,
        "handle": BOT_HANDLE,
        "changed": True,
        "labels": ["!no-unauthenticated", "bot"],
    }
    assert second.exit_code == 0, second.output
    assert "already labelled" in second.output
    assert len(pds.named("com.atproto.repo.putRecord")) == 1
    # The second run reused the session the first one stored.
    assert len(pds.named("com.atproto.server.createSession")) == 1
    assert pds.profile["value"]["displayName"] == "FactNote (bot)"


def test_setup_bluesky_without_credentials_exits_with_a_message(tmp_path: Path) -> None:
    from bot.commands import setup

    result = CliRunner().invoke(
        setup.app,
        ["bluesky", "--session-path", str(tmp_path / "s")],
        env={"FACTNOTE_BLUESKY_HANDLE": "", "FACTNOTE_BLUESKY_APP_PASSWORD": ""},
    )

    assert result.exit_code == 2
    assert "FACTNOTE_BLUESKY_HANDLE" in result.output


def test_recent_posts_since_naive_datetime_is_read_as_utc(adapter: BlueskyAdapter) -> None:
    naive = datetime(2026, 2, 15)
    aware = naive.replace(tzinfo=UTC)

    posts = adapter.recent_posts(HEALTH, since=naive)

    assert [p.id.rsplit("/", 1)[-1] for p in posts] == ["3lhealtha1r", "3lhealthb2s"]
    assert all(p.created_at >= aware for p in posts)
