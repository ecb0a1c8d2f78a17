"""The Bluesky adapter tests' shared world: a real `atproto.Client` on an httpx MockTransport.

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
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from atproto import Client, Request, Session

from adapters.base import (
    Summons,
)
from adapters.bluesky.adapter import BlueskyAdapter

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "bluesky"
PDS = "https://pds.test"
BOT_DID = "did:plc:fnbot7x3k2m4q5r6s7t8u9v"
BOT_HANDLE = "factnote.bsky.social"
PASSWORD = "abcd-efgh-ijkl-mnop"
RESET_EPOCH = 1772400000

ALICE = "at://did:plc:alice2nd5p8q1r4s7t0u3v6w/app.bsky.feed.post/3lalicement3c"
BOB_ROOT = "at://did:plc:bob4rkq2m7zv1c9w3x5y8t6a/app.bsky.feed.post/3lbobroot2aa1"
CAROL = "at://did:plc:carol6hj9k2l5m8n1p4q7r0s/app.bsky.feed.post/3lcarolquot5e"
DAVE = "at://did:plc:dave8mn1op4qr7st0uv3wx6y/app.bsky.feed.post/3ldavereply7g"
ERIN = "at://did:plc:erin5ab8cd1ef4gh7ij0kl3m/app.bsky.feed.post/3lerinmenti9i"
FRANK = "at://did:plc:frank9no2pq5rs8tu1vw4xy7/app.bsky.feed.post/3lfrankment1k"
GINA = "at://did:plc:gina4yz7ab0cd3ef6gh9ij2k/app.bsky.feed.post/3lginachart2l"
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
    # The pages listNotifications walks, newest first, each reached by the previous one's cursor.
    notification_pages: list[str] = field(
        default_factory=lambda: ["notifications_page1.json", "notifications_page2.json"]
    )

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
        pages = [self.notifications_file] if self.notifications_file else self.notification_pages
        page: dict[str, Any] = {"notifications": []}
        if cursor is None:
            page = load(pages[0])
        else:
            after = [i for i, name in enumerate(pages[:-1]) if load(name).get("cursor") == cursor]
            if after:
                page = load(pages[after[0] + 1])
        # The AppView filters `reasons` after fetching a page (@atproto/bsky 0.0.280,
        # dist/api/app/bsky/notification/listNotifications.js lines 41-55,
        # `paginateNotifications`), so a page of other notifications comes back empty, with
        # the cursor of the page it read.
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


def fetch_all(adapter: BlueskyAdapter) -> dict[str, Summons]:
    result = adapter.fetch_summons("2026-03-01T09:30:00.000Z")
    return {s.id: s for s in result.summons}
