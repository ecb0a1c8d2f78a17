"""Bluesky adapter: summons in, replies out, over a real `atproto.Client`.

How it talks to Bluesky, and why:

- Session. createSession is limited to 30 per 5 minutes and 300 per day per account, so the
  client logs in lazily, reuses the session string stored at `session_path` (written atomically,
  mode 0600, on every create/refresh through `on_session_change`), and logs in with the app
  password only when there is no usable stored session, or once per call when the server rejects
  the session (counted in `relogins`).
- Summons. Only `mention` notifications are asked for (`reasons=["mention"]`). The AppView sends
  `reply` to every author up to several levels above a reply and `quote` to the author of a quoted
  post, and a post that both mentions the bot and replies to (or quotes) it yields one `mention`
  (bluesky-social/atproto, packages/bsky/src/data-plane/server/indexing/plugins/post.ts,
  `notifsForInsert`: mentions are notified first and each DID once). A `reply`/`quote` that still
  arrives counts only when its record carries a mention facet for our DID.
- Cursor. `listNotifications` pages backwards (its cursor leads to *older* notifications), so it
  cannot say "since". Our cursor is the newest `indexedAt` we have returned. A notification's
  `indexedAt` is a sort time, min(createdAt, indexedAt), so a post created just before a poll and
  indexed just after it sorts *behind* that cursor: a fetch therefore pages back to `overlap`
  (default 10 minutes) before the cursor (at most `MAX_PAGES` pages) and returns everything newer,
  oldest first. Repeats are dropped here while this process remembers them, and by intake's
  (platform, id) uniqueness after a restart. Without a cursor (first run) only the newest page is
  read, so a fresh deployment never answers a long backlog; the runtime's age limits apply on top.
- Replies. Each reply is created with a record key derived from the summons
  (`reply_record_key`, TID-shaped as app.bsky.feed.post's lexicon asks), so a retried
  `createRecord` cannot make a second post: the PDS refuses a create on an existing key (the MST
  add fails), and the adapter then reads that key back as the receipt. `find_reply` reads our own
  repo on the PDS (`com.atproto.repo.getRecord` for that key, then `listRecords`), never the
  AppView, which may not have indexed a reply made just before a crash. The PDS does not enforce
  thread gates (a gated reply is stored and silently hidden), so `viewer.replyDisabled` of the
  summoning post is read again right before posting (review mode can wait hours).
- Login. After createSession refuses the credentials, the adapter stops logging in
  (`login_halted`) and raises `AccessDenied` without calling the server until the process
  restarts with new settings: createSession allows 30 per 5 minutes and 300 a day.
- Targets. One `getPostThread(summons, depth=0, parentHeight=1)` per summons gives the summons view
  (`viewer.replyDisabled`, quote embed view) and its parent (post, `notFoundPost` or
  `blockedPost`). A quoted post is read from the summons' `app.bsky.embed.record#view`.
- Budgets. The `ratelimit-*` headers of every response are captured by an httpx response hook on
  the client's transport; `budgets()` lists the last ones seen per endpoint (empty until a call
  has been made, or when the client's transport is not an httpx client).

Post text and records are untrusted data; nothing here acts on their content.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from hashlib import sha256
from pathlib import Path
from typing import Any, TypeVar

import httpx
import regex
from atproto import Client, Request, Session, SessionEvent, client_utils, models
from atproto_client.exceptions import (
    BadRequestError,
    LoginRequiredError,
    RateLimitExceededError,
    RequestErrorBase,
    UnauthorizedError,
)
from atproto_client.models.dot_dict import DotDict
from atproto_client.models.utils import get_or_create
from atproto_core.exceptions import AtProtocolError
from pydantic import ValidationError
from pydantic_core import from_json

from adapters.base import (
    AccessDenied,
    FetchResult,
    MediaRef,
    PlatformError,
    RateBudget,
    RateLimited,
    ReplyForbidden,
    ReplyReceipt,
    SocialPost,
    Summons,
    TargetStatus,
    readable_text,
    storable,
    unreadable_summons,
)

_log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_PDS = "https://bsky.social"
SUMMONS_REASONS = ("mention",)
# Admitted only when the record itself carries a mention facet for our DID.
_FACET_REASONS = frozenset({"reply", "quote"})
DEFAULT_OVERLAP = timedelta(minutes=10)
FIND_REPLY_PAGES = 2  # listRecords pages of our own posts read by find_reply
POST_COLLECTION = "app.bsky.feed.post"
PAGE_LIMIT = 100
MAX_PAGES = 5
MAX_FEED_PAGES = 10
MAX_GRAPHEMES = 300
MAX_BYTES = 3000
MAX_POST_TEXT = 3000  # app.bsky.feed.post `text` maxLength (the SDK model refuses longer)
LINK_LABEL_MAX = 24  # graphemes, ellipsis included
HTTP_TIMEOUT_S = 20.0
PROFILE_COLLECTION = "app.bsky.actor.profile"
BOT_LABEL = "bot"

# Error names the PDS uses for a session it no longer accepts.
_AUTH_ERRORS = frozenset({"ExpiredToken", "InvalidToken", "AuthenticationRequired", "AuthMissing"})
_NOT_FOUND_ERRORS = frozenset({"NotFound", "RecordNotFound"})
# createSession refusing the credentials themselves (lexicon com.atproto.server.createSession
# errors, and the PDS's 401 "Invalid identifier or password").
_LOGIN_REFUSED = frozenset(
    {"AuthenticationRequired", "AccountTakedown", "AuthFactorTokenRequired", "InvalidToken"}
)
_TID_CHARS = "234567abcdefghijklmnopqrstuvwxyz"
# An approved link becomes a facet only when it is a whole absolute http(s) URI of printable
# ASCII (the lexicon's `uri` format); anything else stays plain text.
_LINKABLE = re.compile(r"https?://[\x21-\x7e]+", re.IGNORECASE)
# Characters that, right before an approved URL or after it (past sentence punctuation), would
# make it part of a longer URL-like token, hidden characters included: such an occurrence is not
# the URL the guard approved, so it is not linked.
_HIDDEN = r"\p{Cf}\p{Default_Ignorable_Code_Point}"
_BEFORE_LINK = rf"(?<![A-Za-z0-9+.\-_~/@%{_HIDDEN}])"
_AFTER_LINK = rf"(?![.,;:!?'\"*]*+[A-Za-z0-9\-_~/#?=&%@+${_HIDDEN}])"
_LONG_FRACTION = re.compile(r"(\.\d{6})\d+")


class BlueskyConfigError(ValueError):
    """The Bluesky credentials are missing from the environment."""


class ReplyTooLong(PlatformError):
    """The reply exceeds Bluesky's 300 graphemes or 3,000 bytes even with short link labels."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=False)


class _NotFound(PlatformError):
    """The XRPC call named a record or post that does not exist (deleted, or never existed)."""


@dataclass(frozen=True)
class BlueskyCredentials:
    handle: str
    app_password: str = field(repr=False)
    pds: str = DEFAULT_PDS

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> BlueskyCredentials:
        handle = env.get("FACTNOTE_BLUESKY_HANDLE", "").strip().lstrip("@")
        password = env.get("FACTNOTE_BLUESKY_APP_PASSWORD", "").strip()
        missing = [
            name
            for name, value in (
                ("FACTNOTE_BLUESKY_HANDLE", handle),
                ("FACTNOTE_BLUESKY_APP_PASSWORD", password),
            )
            if not value
        ]
        if missing:
            raise BlueskyConfigError(f"missing environment variable(s): {', '.join(missing)}")
        pds = env.get("FACTNOTE_BLUESKY_PDS", "").strip() or DEFAULT_PDS
        return cls(handle=handle, app_password=password, pds=pds)


@dataclass(frozen=True)
class BotLabelResult:
    """What `ensure_bot_label` found and did."""

    did: str
    handle: str
    changed: bool
    labels: list[str]


@dataclass(frozen=True)
class _Resolution:
    target: SocialPost | None
    status: TargetStatus
    reason: str = ""
    reply_allowed: bool = True


class BlueskyAdapter:
    """The Bluesky side of the bot: implements `adapters.base.Adapter`."""

    name = "bluesky"

    def __init__(
        self,
        creds: BlueskyCredentials,
        *,
        session_path: str | Path,
        client: Client | None = None,
        known_bots: Collection[str] = (),
        overlap: timedelta = DEFAULT_OVERLAP,
    ) -> None:
        if overlap < timedelta(0):
            raise ValueError("overlap must not be negative")
        self._creds = creds
        self._overlap = overlap
        # Summons this process returned with a new cursor: uri -> (sort time, that cursor). The
        # overlap reads them again; once the runtime passes that cursor back (it stores a cursor
        # only in the transaction that stored the rows), they are not resolved again.
        self._returned: dict[str, tuple[datetime, datetime]] = {}
        self._login_halted: str | None = None
        self._session_path = Path(session_path)
        self._client = (
            client
            if client is not None
            else Client(base_url=creds.pds, request=Request(timeout=HTTP_TIMEOUT_S))
        )
        self._known_bots = frozenset(b.strip().lstrip("@").lower() for b in known_bots)
        self._me: Session | None = None
        self._budgets: dict[str, RateBudget] = {}
        self.password_logins = 0  # createSession calls made by this adapter
        self.relogins = 0  # of those, the ones forced by a rejected session
        self._client.on_session_change(self._on_session_change)
        self._install_rate_hook()

    # ----------------------------------------------------------------- Adapter interface

    def fetch_summons(self, cursor: str | None) -> FetchResult:
        since = _parse_cursor(cursor)
        # Taken before listing, so anything indexed during the fetch stays unread.
        seen_at = _now().isoformat()
        me = self._ensure_login()
        floor = since - self._overlap if since is not None else None
        fresh = self._new_notifications(floor)
        summonses: list[Summons] = []
        done: set[str] = set()
        for note in reversed(fresh):
            if note.uri in done or self._committed(note.uri, since):
                continue
            summons = self._read_summons(note, me)
            if summons is None:
                continue
            done.add(note.uri)
            summonses.append(summons)
        # An item whose time cannot be read does not move the cursor; it is recorded anyway.
        fresh = [n for n in fresh if n.indexed_at]
        newest = max((_server_time(n.indexed_at) for n in fresh), default=None)
        if newest is None or (since is not None and newest <= since):
            # Only the overlap was read again: nothing newer than the cursor.
            return FetchResult(summons=summonses, cursor=None)
        self._call(
            "updateSeen",
            lambda: self._client.app.bsky.notification.update_seen(
                models.AppBskyNotificationUpdateSeen.Data(seen_at=seen_at)
            ),
        )
        for note in fresh:
            if note.uri in done:
                self._returned[note.uri] = (_server_time(note.indexed_at), newest)
        horizon = newest - self._overlap
        self._returned = {u: v for u, v in self._returned.items() if v[0] > horizon}
        latest = max(fresh, key=lambda n: _server_time(n.indexed_at))
        return FetchResult(summons=summonses, cursor=latest.indexed_at)

    def _committed(self, uri: str, since: datetime | None) -> bool:
        returned = self._returned.get(uri)
        return returned is not None and since is not None and returned[1] <= since

    def _read_summons(self, note: Any, me: Session) -> Summons | None:
        """The summons of one notification, None when it does not summon us. One that cannot
        be read is a recorded, skipped summons: never an exception that fails the poll (only
        a retryable platform failure, which the next poll tries again, is raised)."""
        if isinstance(note, _BadNote):
            return note.summons()
        try:
            record, notes = _post_record(note.record, note.indexed_at)
            if record is None:
                if note.reason not in SUMMONS_REASONS:
                    return None  # a reply/quote we cannot read cannot show a mention of us
                return _BadNote.of(note, "; ".join(notes)).summons()
            if not _summons_us(note.reason, record, me.did):
                return None
            return self._build_summons(note, record, notes, me)
        except PlatformError as exc:
            if exc.retryable:
                raise
            return _BadNote.of(note, str(exc)).summons()
        except Exception as exc:  # a shape this code did not foresee: record it
            _log.exception("Bluesky notification %s could not be read", note.uri)
            return _BadNote.of(note, f"{type(exc).__name__}: {exc}").summons()

    def post_reply(self, summons: Summons, text: str, links: Sequence[str] = ()) -> ReplyReceipt:
        if not summons.reply_allowed:
            raise ReplyForbidden(f"replies to {summons.id} are disabled by a thread gate")
        me = self._ensure_login()
        builder = reply_text_builder(text, links)
        # The gate may have changed since intake (review can take hours), and the PDS would
        # store a gated reply that nobody sees: ask again now.
        view = self._summons_view(summons.id)
        ctx = dict(summons.reply_context)
        if not all(ctx.get(k) for k in ("root_uri", "root_cid", "parent_uri", "parent_cid")):
            ctx.update(_reply_refs(view))
        reply_to = models.AppBskyFeedPost.ReplyRef(
            root=models.ComAtprotoRepoStrongRef.Main(uri=ctx["root_uri"], cid=ctx["root_cid"]),
            parent=models.ComAtprotoRepoStrongRef.Main(
                uri=ctx["parent_uri"], cid=ctx["parent_cid"]
            ),
        )
        # The record send_post would write (atproto_client/client/client.py), with our own key.
        record = models.AppBskyFeedPost.Record(
            created_at=self._client.get_current_time_iso(),
            text=builder.build_text(),
            facets=builder.build_facets() or None,
            reply=reply_to,
            langs=[ctx["lang"]] if ctx.get("lang") else None,
        )
        rkey = reply_record_key(summons)
        try:
            created = self._call(
                "createRecord",
                lambda: self._client.app.bsky.feed.post.create(me.did, record, rkey=rkey),
                posting=True,
            )
        except (RateLimited, ReplyForbidden, AccessDenied):
            raise
        except PlatformError:
            # A create on a key that exists fails (the repo's MST refuses a second value at a
            # key): our reply may be there from an attempt whose answer was lost.
            existing = self._own_reply(me, rkey, summons.id)
            if existing is not None:
                return existing
            raise
        return ReplyReceipt(
            reply_id=created.uri,
            url=_permalink(me.handle, me.did, created.uri),
            posted_at=_now(),
        )

    def find_reply(self, summons: Summons) -> ReplyReceipt | None:
        """Our reply to `summons`, read from our own repo on the PDS (never the AppView)."""
        me = self._ensure_login()
        found = self._own_reply(me, reply_record_key(summons), summons.id)
        if found is not None:
            return found
        # Replies created before record keys were derived from the summons: our newest posts.
        cursor: str | None = None
        for _ in range(FIND_REPLY_PAGES):
            resp = self._call(
                "listRecords",
                partial(
                    self._client.com.atproto.repo.list_records,
                    models.ComAtprotoRepoListRecords.Params(
                        repo=me.did, collection=POST_COLLECTION, limit=PAGE_LIMIT, cursor=cursor
                    ),
                ),
            )
            for item in resp.records:
                if _replies_to(item.value, summons.id):
                    return self._record_receipt(item.uri, item.value, me)
            cursor = resp.cursor
            if not cursor or not resp.records:
                break
        return None

    def recent_posts(
        self, user: str, *, limit: int = 50, since: datetime | None = None
    ) -> list[SocialPost]:
        if since is not None and since.tzinfo is None:
            since = since.replace(tzinfo=UTC)
        self._ensure_login()
        posts: list[SocialPost] = []
        cursor: str | None = None
        for _ in range(MAX_FEED_PAGES):
            resp = self._call(
                "getAuthorFeed",
                partial(
                    self._client.get_author_feed,
                    actor=user,
                    cursor=cursor,
                    filter="posts_no_replies",
                    limit=min(PAGE_LIMIT, max(limit, 1)),
                ),
            )
            for item in resp.feed:
                if item.reason is not None:  # a repost: someone else's words
                    continue
                try:
                    post = _post_from_view(item.post, self._is_bot)
                except PlatformError as exc:  # a post that cannot be read: the others can
                    _log.warning("Bluesky feed of %s: %s", user, exc)
                    continue
                # The feed is ordered by the earlier of createdAt and indexedAt.
                sort_at = min(post.created_at, _server_time(item.post.indexed_at))
                if since is not None and sort_at < since:
                    return posts
                posts.append(post)
                if len(posts) >= limit:
                    return posts
            cursor = resp.cursor
            if not cursor or not resp.feed:
                break
        return posts

    def budgets(self) -> list[RateBudget]:
        return [self._budgets[k] for k in sorted(self._budgets)]

    # ----------------------------------------------------------------- account setup

    def ensure_bot_label(self) -> BotLabelResult:
        """Give the profile the `bot` self-label, keeping every other field. Idempotent."""
        me = self._ensure_login()
        try:
            got = self._call(
                "getRecord",
                lambda: self._client.com.atproto.repo.get_record(
                    models.ComAtprotoRepoGetRecord.Params(
                        repo=me.did, collection=PROFILE_COLLECTION, rkey="self"
                    )
                ),
            )
            record: dict[str, Any] = models.get_model_as_dict(got.value)
            swap: str | None = got.cid
        except _NotFound:
            record, swap = {"$type": PROFILE_COLLECTION}, None
        labels = record.get("labels")
        values: list[dict[str, Any]] = []
        if isinstance(labels, dict) and isinstance(labels.get("values"), list):
            values = [v for v in labels["values"] if isinstance(v, dict)]
        names = [str(v.get("val")) for v in values]
        if BOT_LABEL in names:
            return BotLabelResult(did=me.did, handle=me.handle, changed=False, labels=names)
        record["labels"] = {
            "$type": "com.atproto.label.defs#selfLabels",
            "values": [*values, {"val": BOT_LABEL}],
        }
        self._call(
            "putRecord",
            lambda: self._client.com.atproto.repo.put_record(
                models.ComAtprotoRepoPutRecord.Data(
                    repo=me.did,
                    collection=PROFILE_COLLECTION,
                    rkey="self",
                    record=record,
                    # Compare-and-swap: a profile edited meanwhile is not overwritten.
                    swap_record=swap,
                )
            ),
        )
        return BotLabelResult(
            did=me.did, handle=me.handle, changed=True, labels=[*names, BOT_LABEL]
        )

    # ----------------------------------------------------------------- session

    def _ensure_login(self) -> Session:
        if self._me is not None:
            return self._me
        stored = self._read_session()
        if stored is not None:
            try:
                self._client.login(session_string=stored, fetch_bsky_profile=False)
            except (AtProtocolError, ValueError) as exc:
                _log.warning("stored Bluesky session unusable (%s)", type(exc).__name__)
            else:
                self._me = Session.decode(self._client.export_session_string())
                return self._me
        return self._password_login()

    def _read_session(self) -> str | None:
        try:
            text = self._session_path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        try:
            session = Session.decode(text)
            # The client refuses a token without an expiry at its first call: check it now.
            usable = session.access_jwt_payload.exp is not None
        except (ValueError, AtProtocolError):
            usable = False
        if not usable:
            _log.warning("stored Bluesky session at %s is malformed", self._session_path)
            return None
        wanted = self._creds.handle.lower()
        if wanted not in (session.handle.lower(), session.did.lower()):
            _log.warning("stored Bluesky session belongs to another account; ignoring it")
            return None
        return text

    @property
    def login_halted(self) -> str | None:
        """Why logging in has stopped (credentials refused), or None while it may log in."""
        return self._login_halted

    def _password_login(self) -> Session:
        if self._login_halted is not None:
            raise AccessDenied(
                f"Bluesky: not logging in again after {self._login_halted}; fix "
                "FACTNOTE_BLUESKY_HANDLE / FACTNOTE_BLUESKY_APP_PASSWORD and restart",
                status=401,
            )
        # createSession belongs to the configured entryway, whatever PDS the old session named.
        self._client.update_base_url(self._creds.pds)
        self.password_logins += 1
        try:
            self._client.login(
                self._creds.handle, self._creds.app_password, fetch_bsky_profile=False
            )
        except AtProtocolError as exc:
            error = _translate(exc, "createSession", posting=False)
            if not _login_refused(exc):
                raise error from exc
            # Each further try would spend createSession's 30-per-5-minutes / 300-a-day limit
            # on credentials that cannot work: stop until the settings change.
            self._login_halted = f"the login was refused ({error})"
            _log.error("Bluesky login refused; no more logins until restart: %s", error)
            raise AccessDenied(
                f"Bluesky: {self._login_halted}; fix FACTNOTE_BLUESKY_HANDLE / "
                "FACTNOTE_BLUESKY_APP_PASSWORD and restart",
                status=error.status,
            ) from exc
        self._me = Session.decode(self._client.export_session_string())
        return self._me

    def _on_session_change(self, event: SessionEvent, session: Session) -> None:
        if event in (SessionEvent.CREATE, SessionEvent.REFRESH):
            _write_private(self._session_path, session.export())
            self._me = session

    def _call(self, endpoint: str, fn: Callable[[], T], *, posting: bool = False) -> T:
        self._ensure_login()
        try:
            return fn()
        except AtProtocolError as exc:
            if not _is_auth_failure(exc):
                raise _translate(exc, endpoint, posting=posting) from exc
        _log.info("Bluesky rejected the session at %s; logging in with the app password", endpoint)
        self.relogins += 1
        self._me = None
        self._password_login()
        try:
            return fn()
        except AtProtocolError as exc:
            raise _translate(exc, endpoint, posting=posting) from exc

    # ----------------------------------------------------------------- rate budgets

    def _install_rate_hook(self) -> None:
        # atproto exposes no hook of its own; its Request wraps a plain httpx.Client.
        http = getattr(self._client.request, "_client", None)
        if isinstance(http, httpx.Client):
            hooks = http.event_hooks
            hooks["response"] = [*hooks.get("response", []), self._observe_response, _repair_json]
            http.event_hooks = hooks
        else:
            _log.info("Bluesky client transport is not httpx: budgets() will stay empty")

    def _observe_response(self, response: httpx.Response) -> None:
        headers = response.headers
        if not any(h in headers for h in ("ratelimit-limit", "ratelimit-remaining")):
            return
        endpoint = response.request.url.path.rsplit("/", 1)[-1]
        reset = _int_or_none(headers.get("ratelimit-reset"))
        self._budgets[endpoint] = RateBudget(
            endpoint=endpoint,
            limit=_int_or_none(headers.get("ratelimit-limit")),
            remaining=_int_or_none(headers.get("ratelimit-remaining")),
            reset_at=datetime.fromtimestamp(reset, tz=UTC) if reset is not None else None,
        )

    # ----------------------------------------------------------------- summons

    def _new_notifications(self, since: datetime | None) -> list[Any]:
        fresh: list[Any] = []
        page_cursor: str | None = None
        pages = MAX_PAGES if since is not None else 1
        for _ in range(pages):
            params = models.AppBskyNotificationListNotifications.Params(
                limit=PAGE_LIMIT, reasons=list(SUMMONS_REASONS), cursor=page_cursor
            )
            notes, next_cursor = self._call(
                "listNotifications", partial(self._list_notifications, params)
            )
            for note in notes:
                if since is not None and note.indexed_at and _server_time(note.indexed_at) <= since:
                    return fresh
                fresh.append(note)
            if not next_cursor or not notes:
                return fresh
            page_cursor = next_cursor
        if since is not None:
            _log.warning(
                "Bluesky notifications: stopped after %d pages before reaching %s; older ones "
                "are skipped",
                pages,
                since.isoformat(),
            )
        return fresh

    def _list_notifications(self, params: Any) -> tuple[list[Any], str | None]:
        """One page of notifications, each read on its own (the SDK's typed call fails the
        whole page when one notification does not fit the lexicon): the readable ones as SDK
        models, the others as `_BadNote`s."""
        response = self._client.invoke_query(
            "app.bsky.notification.listNotifications",
            params=params,
            output_encoding="application/json",
        )
        body = response.content if isinstance(response.content, dict) else {}
        items = body.get("notifications")
        notes = [_read_notification(item) for item in items] if isinstance(items, list) else []
        cursor = body.get("cursor")
        return notes, cursor if isinstance(cursor, str) else None

    def _build_summons(self, note: Any, record: Any, notes: list[str], me: Session) -> Summons:
        author = note.author
        reply = record.reply
        parent_uri: str | None = reply.parent.uri if reply is not None else None
        quoted = _quoted_ref(record.embed)
        # Our reply's parent is the summons; its root is the summons' root, or the summons.
        ctx = {
            "root_uri": reply.root.uri if reply is not None else note.uri,
            "root_cid": reply.root.cid if reply is not None else note.cid,
            "parent_uri": note.uri,
            "parent_cid": note.cid,
        }
        if record.langs:
            ctx["lang"] = record.langs[0]
        try:
            res = self._resolve(note.uri, parent_uri, quoted.uri if quoted else None)
        except PlatformError as exc:
            if exc.retryable:
                raise
            res = _Resolution(None, TargetStatus.UNAVAILABLE, reason=str(exc))
        return Summons(
            platform=self.name,
            id=note.uri,
            author=author.handle,
            author_id=author.did,
            text=readable_text(record.text, notes),
            created_at=_parse_time_or(record.created_at, note.indexed_at),
            url=_permalink(author.handle, author.did, note.uri),
            parent_id=parent_uri,
            quoted_id=quoted.uri if quoted else None,
            reply_context=ctx,
            target=res.target,
            target_status=res.status,
            target_reason=res.reason,
            replies_to_bot=parent_uri is not None and _uri_authority(parent_uri) == me.did,
            author_is_bot=self._is_bot(author),
            reply_allowed=res.reply_allowed,
            notes=notes,
        )

    def _resolve(self, uri: str, parent_uri: str | None, quoted_uri: str | None) -> _Resolution:
        """The asked-about post: the quoted one if any, else the parent, else the summons."""
        try:
            resp = self._call(
                "getPostThread",
                lambda: self._client.get_post_thread(uri, depth=0, parent_height=1),
            )
        except _NotFound:
            return _Resolution(
                None, TargetStatus.UNAVAILABLE, "the summoning post is deleted", False
            )
        thread = resp.thread
        if isinstance(thread, models.AppBskyFeedDefs.BlockedPost):
            return _Resolution(
                None, TargetStatus.UNAVAILABLE, "the summoning post is blocked", False
            )
        if not isinstance(thread, models.AppBskyFeedDefs.ThreadViewPost):
            return _Resolution(
                None, TargetStatus.UNAVAILABLE, "the summoning post is not readable", False
            )
        view = thread.post
        allowed = not (view.viewer is not None and view.viewer.reply_disabled)
        if quoted_uri is not None:
            return self._resolve_quoted(view, quoted_uri, allowed)
        if parent_uri is not None:
            parent = thread.parent
            if isinstance(parent, models.AppBskyFeedDefs.ThreadViewPost):
                target = _post_from_view(parent.post, self._is_bot)
                return _Resolution(target, TargetStatus.OK, reply_allowed=allowed)
            if isinstance(parent, models.AppBskyFeedDefs.NotFoundPost):
                return _Resolution(None, TargetStatus.MISSING, "parent post not found", allowed)
            if isinstance(parent, models.AppBskyFeedDefs.BlockedPost):
                return _Resolution(None, TargetStatus.BLOCKED, "parent post is blocked", allowed)
            return self._resolve_by_uri(parent_uri, allowed)
        return _Resolution(_post_from_view(view, self._is_bot), TargetStatus.SELF, "", allowed)

    def _resolve_quoted(self, view: Any, quoted_uri: str, allowed: bool) -> _Resolution:
        embedded = _record_view(view.embed)
        if isinstance(embedded, models.AppBskyEmbedRecord.ViewRecord):
            target = _post_from_record_view(embedded, self._is_bot)
            if target is not None:
                return _Resolution(target, TargetStatus.OK, reply_allowed=allowed)
        if isinstance(embedded, models.AppBskyEmbedRecord.ViewNotFound):
            return _Resolution(None, TargetStatus.MISSING, "quoted post not found", allowed)
        if isinstance(embedded, models.AppBskyEmbedRecord.ViewBlocked):
            return _Resolution(None, TargetStatus.BLOCKED, "quoted post is blocked", allowed)
        if isinstance(embedded, models.AppBskyEmbedRecord.ViewDetached):
            return _Resolution(
                None, TargetStatus.UNAVAILABLE, "quoted post detached by its author", allowed
            )
        return self._resolve_by_uri(quoted_uri, allowed)

    def _resolve_by_uri(self, uri: str, allowed: bool) -> _Resolution:
        resp = self._call("getPosts", lambda: self._client.get_posts([uri]))
        for view in resp.posts:
            if view.uri == uri:
                return _Resolution(
                    _post_from_view(view, self._is_bot), TargetStatus.OK, reply_allowed=allowed
                )
        return _Resolution(None, TargetStatus.MISSING, "post not returned by getPosts", allowed)

    def _summons_view(self, uri: str) -> Any:
        """The summoning post's view as we see it now; ReplyForbidden if we may not answer."""
        try:
            resp = self._call(
                "getPostThread",
                lambda: self._client.get_post_thread(uri, depth=0, parent_height=0),
            )
        except _NotFound as exc:
            raise ReplyForbidden(f"the summoning post {uri} is deleted") from exc
        thread = resp.thread
        if not isinstance(thread, models.AppBskyFeedDefs.ThreadViewPost):
            raise ReplyForbidden(f"the summoning post {uri} is no longer readable")
        view = thread.post
        if view.viewer is not None and view.viewer.reply_disabled:
            raise ReplyForbidden(f"replies to {uri} are disabled by a thread gate")
        if not models.is_record_type(view.record, models.AppBskyFeedPost):
            raise ReplyForbidden(f"{uri} is not a post")
        return view

    def _own_reply(self, me: Session, rkey: str, summons_uri: str) -> ReplyReceipt | None:
        """Our post at `rkey` in our own repo, if it answers `summons_uri`."""
        try:
            got = self._call(
                "getRecord",
                lambda: self._client.com.atproto.repo.get_record(
                    models.ComAtprotoRepoGetRecord.Params(
                        repo=me.did, collection=POST_COLLECTION, rkey=rkey
                    )
                ),
            )
        except _NotFound:
            return None
        if not _replies_to(got.value, summons_uri):
            return None
        return self._record_receipt(got.uri, got.value, me)

    def _record_receipt(self, uri: str, record: Any, me: Session) -> ReplyReceipt:
        created = getattr(record, "created_at", None)
        posted_at = _now()
        if created:
            with suppress(ValueError):
                posted_at = _parse_time(created)
        return ReplyReceipt(
            reply_id=uri, url=_permalink(me.handle, me.did, uri), posted_at=posted_at
        )

    def _is_bot(self, author: Any) -> bool:
        for label in getattr(author, "labels", None) or []:
            if label.val == BOT_LABEL and not label.neg:
                return True
        names = {str(author.did).lower(), str(getattr(author, "handle", "")).lower()}
        return bool(names & self._known_bots)


def _repair_json(response: httpx.Response) -> None:
    """Make a JSON body that is not valid UTF-8, or that escapes a lone surrogate ("\\ud83d",
    half an emoji), readable: the SDK parses bodies with pydantic_core, which refuses both and
    would fail the whole call, every poll. Invalid bytes become U+FFFD and lone surrogates
    backslash escapes (`storable`); a body that parses as it is is left alone."""
    if "application/json" not in response.headers.get("content-type", "").lower():
        return
    body = response.read()
    try:
        from_json(body)
        return
    except ValueError:
        pass
    try:
        data = json.loads(body.decode("utf-8", "replace"))
    except ValueError:
        return  # not JSON at all: the SDK reports it as it is
    _log.warning("Bluesky %s: body had invalid text; read with it escaped", response.url.path)
    # httpx has no public way to replace a read body; the SDK reads `response.content` next.
    response._content = json.dumps(_storable_json(data)).encode()


def _storable_json(value: Any) -> Any:
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, list):
        return [_storable_json(v) for v in value]
    if isinstance(value, dict):
        return {storable(str(k)): _storable_json(v) for k, v in value.items()}
    return value


# --------------------------------------------------------------------- reply text


def link_label(url: str) -> str:
    """A short visible label for a link facet: host and path, cut with an ellipsis."""
    label = re.sub(r"^https?://", "", url, flags=re.IGNORECASE)
    label = re.sub(r"^www\.", "", label, flags=re.IGNORECASE).rstrip("/")
    clusters = regex.findall(r"\X", label)
    if len(clusters) <= LINK_LABEL_MAX:
        return label
    return "".join(clusters[: LINK_LABEL_MAX - 1]) + "…"


def _split_urls(text: str, links: Collection[str]) -> Iterable[tuple[str, bool]]:
    """(piece, is_url) in order: the exact occurrences of `links` that stand alone, and the
    text between them. No URL is looked for here: finding links is the guard's job."""
    wanted = sorted({link for link in links if _LINKABLE.fullmatch(link)}, key=len, reverse=True)
    pos = 0
    if wanted:  # longest first, so a link that extends another is taken whole
        alternatives = "|".join(regex.escape(link) for link in wanted)
        for match in regex.finditer(rf"{_BEFORE_LINK}(?:{alternatives}){_AFTER_LINK}", text):
            if match.start() > pos:
                yield text[pos : match.start()], False
            yield match.group(), True
            pos = match.end()
    if pos < len(text):
        yield text[pos:], False


def reply_text_builder(text: str, links: Collection[str] = ()) -> Any:
    """The reply as a TextBuilder: the approved `links` become link facets with short labels.

    On Bluesky only a facet makes text a link (lexicon `app.bsky.richtext.facet`, feature
    `#link`: "Facet feature for a URL. The text URL may have been simplified or truncated, but
    the facet reference should be a complete URL"); clients do not auto-link plain text. So
    the links are exactly the URL strings the guard approved (`Decision.urls`), linked where
    they occur whole in `text`; any other URL-looking text, however a browser would read it,
    is sent as plain text.

    TextBuilder measures facets in UTF-8 bytes as it writes, so offsets stay right whatever
    precedes the link (accents, emoji, CJK). Raises ReplyTooLong over Bluesky's limits.
    """
    builder = client_utils.TextBuilder()
    for piece, is_url in _split_urls(text, links):
        if is_url:
            builder.link(link_label(piece), piece)
        else:
            builder.text(piece)
    final = builder.build_text()
    graphemes = len(regex.findall(r"\X", final))
    size = len(final.encode("utf-8"))
    if graphemes > MAX_GRAPHEMES or size > MAX_BYTES:
        raise ReplyTooLong(
            f"reply is {graphemes} graphemes / {size} bytes; Bluesky allows "
            f"{MAX_GRAPHEMES} / {MAX_BYTES}"
        )
    return builder


# --------------------------------------------------------------------- views to records


def _post_from_view(view: Any, is_bot: Callable[[Any], bool]) -> SocialPost:
    record, notes = _post_record(view.record, view.indexed_at)
    if record is None:
        raise PlatformError(f"{view.uri}: {'; '.join(notes)}", retryable=False)
    embeds = [view.embed] if view.embed is not None else []
    quoted_view = _record_view(view.embed)
    quoted = (
        _post_from_record_view(quoted_view, is_bot)
        if isinstance(quoted_view, models.AppBskyEmbedRecord.ViewRecord)
        else None
    )
    return _social_post(view, record, embeds, is_bot, quoted, notes)


def _post_from_record_view(view: Any, is_bot: Callable[[Any], bool]) -> SocialPost | None:
    if not models.is_record_type(view.value, models.AppBskyFeedPost):
        return None  # a quoted feed generator, list or starter pack: not a post
    record, notes = _post_record(view.value, view.indexed_at)
    if record is None:
        return None
    return _social_post(view, record, list(view.embeds or []), is_bot, None, notes)


def _social_post(
    view: Any,
    record: Any,
    embeds: list[Any],
    is_bot: Callable[[Any], bool],
    quoted: SocialPost | None,
    notes: list[str],
) -> SocialPost:
    media: list[MediaRef] = []
    links = _facet_links(record.facets)
    for embed in embeds:
        for part in _media_parts(embed):
            if isinstance(part, models.AppBskyEmbedImages.View):
                media.extend(
                    MediaRef(url=img.fullsize, alt_text=img.alt or None, kind="photo")
                    for img in part.images
                )
            elif isinstance(part, models.AppBskyEmbedExternal.View):
                links.append(part.external.uri)
            elif isinstance(part, models.AppBskyEmbedVideo.View):
                # Recorded, not analysed: the pipeline is told "video not analysed".
                media.append(
                    MediaRef(
                        url=part.thumbnail or part.playlist, alt_text=part.alt or None, kind="video"
                    )
                )
            elif not isinstance(part, models.AppBskyEmbedRecord.View):
                # An embed type this SDK does not know (a DotDict) or this code does not read.
                kind = _embed_type(part)
                media.append(MediaRef(url="", kind="unsupported", note=f"embed {kind} not read"))
    return SocialPost(
        id=view.uri,
        author=view.author.handle,
        author_id=view.author.did,
        text=readable_text(record.text, notes),
        created_at=_parse_time_or(record.created_at, view.indexed_at),
        url=_permalink(view.author.handle, view.author.did, view.uri),
        lang=record.langs[0] if record.langs else None,
        links=list(dict.fromkeys(links)),
        media=media,
        quoted=quoted,
        author_is_bot=is_bot(view.author),
        notes=notes,
    )


def _embed_type(embed: Any) -> str:
    """The `$type` of an embed view, whatever the SDK made of it."""
    if isinstance(embed, DotDict):
        kind = embed.to_dict().get("$type")
        return storable(kind)[:100] if isinstance(kind, str) else "without a $type"
    return str(getattr(embed, "py_type", None) or type(embed).__name__)


# The fields of a post record that may be left out when they cannot be read (the lexicon makes
# them optional and the post still says what it says without them). `reply` is not among them:
# a reply read as a top-level post would be answered in the wrong place.
_OPTIONAL_POST_FIELDS = ("embed", "facets", "langs", "labels", "tags", "entities")


def _post_record(record: Any, indexed_at: str | None) -> tuple[Any | None, list[str]]:
    """A post record as the SDK's model, reading what can be read of one that does not fit
    the lexicon (the SDK leaves such a record a DotDict): text over the lexicon's 3,000 is cut,
    a missing `createdAt` is the indexing time, unreadable optional fields are left out. Each
    change is a note. (None, why) when it is not a post or cannot be read at all."""
    if isinstance(record, models.AppBskyFeedPost.Record):
        return record, []
    data = record.to_dict() if isinstance(record, DotDict) else record
    if not isinstance(data, dict) or data.get("$type") != POST_COLLECTION:
        kind = data.get("$type") if isinstance(data, dict) else type(record).__name__
        return None, [f"not a post record ({storable(str(kind))[:100]})"]
    data = dict(data)
    notes: list[str] = []
    text = readable_text(data.get("text"), notes)
    if len(text) > MAX_POST_TEXT:
        notes.append(f"text cut to {MAX_POST_TEXT:,} of {len(text):,} characters")
        text = text[:MAX_POST_TEXT]
    data["text"] = text
    if not isinstance(data.get("createdAt"), str) and indexed_at:
        notes.append("createdAt missing: the indexing time is used")
        data["createdAt"] = indexed_at
    for _ in range(len(_OPTIONAL_POST_FIELDS) + 1):
        try:
            return models.AppBskyFeedPost.Record.model_validate(data), notes
        except ValidationError as exc:
            failed = {str(e["loc"][0]) for e in exc.errors() if e["loc"]}
            optional = [f for f in _OPTIONAL_POST_FIELDS if f in failed]
            if not optional or failed - set(optional):
                problem = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                    for e in exc.errors(include_url=False, include_input=False)
                )
                return None, [*notes, f"post record cannot be read: {storable(problem)[:300]}"]
            for name in optional:
                data.pop(name, None)
                notes.append(f"{name} could not be read: left out")
    return None, [*notes, "post record cannot be read"]


@dataclass(frozen=True)
class _BadNote:
    """A notification that could not be read: recorded as a skipped summons, keyed by its post
    uri when it has one (so a later read of the same notification is the same request)."""

    uri: str
    indexed_at: str  # "" when unreadable (then it does not move the cursor)
    problem: str
    author: str = ""

    @classmethod
    def of(cls, note: Any, problem: str) -> _BadNote:
        author = getattr(getattr(note, "author", None), "handle", "") or ""
        return cls(note.uri, note.indexed_at or "", problem, author)

    def summons(self) -> Summons:
        when = _now()
        if self.indexed_at:
            with suppress(ValueError):
                when = _parse_time(self.indexed_at)
        return unreadable_summons(
            "bluesky", self.uri, self.problem, created_at=when, author=self.author
        )


def _read_notification(item: Any) -> Any:
    """One notification as the SDK's model, or a `_BadNote` saying why it cannot be read."""
    raw = item if isinstance(item, dict) else {}
    uri = raw.get("uri")
    if not isinstance(uri, str) or not uri:
        digest = sha256(json.dumps(item, sort_keys=True, default=str).encode()).hexdigest()
        uri = f"malformed:bluesky:sha256-{digest[:16]}"
    indexed = raw.get("indexedAt")
    indexed_at = indexed if isinstance(indexed, str) and _is_time(indexed) else ""
    try:
        note = get_or_create(item, models.AppBskyNotificationListNotifications.Notification)
    except (AtProtocolError, ValueError) as exc:
        return _BadNote(uri, indexed_at, _model_problem(exc))
    if not indexed_at:
        why = f"indexedAt is not a date-time: {storable(repr(indexed))[:60]}"
        return _BadNote(uri, "", why, note.author.handle)
    return note


def _model_problem(exc: Exception) -> str:
    cause = exc.__cause__ if isinstance(exc.__cause__, ValidationError) else exc
    if isinstance(cause, ValidationError):
        return storable(
            "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'notification'}: {e['msg']}"
                for e in cause.errors(include_url=False, include_input=False)
            )
        )[:300]
    return storable(f"{type(exc).__name__}: {exc}")[:300]


def _is_time(value: str) -> bool:
    try:
        _parse_time(value)
    except ValueError:
        return False
    return True


def _media_parts(embed: Any) -> list[Any]:
    if isinstance(embed, models.AppBskyEmbedRecordWithMedia.View):
        return [embed.media]
    return [embed]


def _facet_links(facets: Any) -> list[str]:
    links: list[str] = []
    for facet in facets or []:
        for feature in facet.features:
            if isinstance(feature, models.AppBskyRichtextFacet.Link):
                links.append(feature.uri)
    return links


def _quoted_ref(embed: Any) -> Any:
    """The strong ref of a quoted post in a post record's embed, if any."""
    if isinstance(embed, models.AppBskyEmbedRecord.Main):
        return embed.record
    if isinstance(embed, models.AppBskyEmbedRecordWithMedia.Main):
        return embed.record.record
    return None


def _record_view(embed: Any) -> Any:
    """The quoted record's view inside a post view's embed, if any."""
    if isinstance(embed, models.AppBskyEmbedRecord.View):
        return embed.record
    if isinstance(embed, models.AppBskyEmbedRecordWithMedia.View):
        return embed.record.record
    return None


def _reply_refs(view: Any) -> dict[str, str]:
    """Our reply's root and parent: the summons' own root (or the summons), and the summons."""
    reply = view.record.reply
    return {
        "root_uri": reply.root.uri if reply is not None else view.uri,
        "root_cid": reply.root.cid if reply is not None else view.cid,
        "parent_uri": view.uri,
        "parent_cid": view.cid,
    }


def _replies_to(record: Any, uri: str) -> bool:
    return (
        models.is_record_type(record, models.AppBskyFeedPost)
        and record.reply is not None
        and record.reply.parent.uri == uri
    )


def _summons_us(reason: str, record: Any, did: str) -> bool:
    """A `mention`, or a reply/quote whose record has a mention facet for `did`."""
    if reason in SUMMONS_REASONS:
        return True
    return reason in _FACET_REASONS and did in _facet_mentions(record.facets)


def _facet_mentions(facets: Any) -> set[str]:
    return {
        feature.did
        for facet in facets or []
        for feature in facet.features
        if isinstance(feature, models.AppBskyRichtextFacet.Mention)
    }


def reply_record_key(summons: Summons) -> str:
    """The record key of our reply to `summons`: the same on every attempt.

    Shaped as a TID (13 base32-sortable characters, atproto_client/models/string_formats.py
    `TID_RE`), since app.bsky.feed.post's lexicon declares `key: tid`. The timestamp part is the
    summons' creation time to the millisecond; the sub-millisecond digits and the 10-bit clock id
    come from a hash of the summons uri, so two summons of the same millisecond differ.
    """
    digest = int.from_bytes(sha256(f"{summons.platform}:{summons.id}".encode()).digest()[:8])
    millis = int(summons.created_at.timestamp() * 1000)
    micros = min(max(millis, 0) * 1000 + digest % 1000, (1 << 53) - 1)
    value = (micros << 10) | ((digest >> 10) & 0x3FF)
    return "".join(_TID_CHARS[(value >> (5 * i)) & 31] for i in reversed(range(13)))


# --------------------------------------------------------------------- errors


def _xrpc_error(exc: RequestErrorBase) -> tuple[str, str]:
    content = exc.response.content if exc.response is not None else None
    error = getattr(content, "error", None)
    message = getattr(content, "message", None)
    return str(error or ""), str(message or "")


def _is_auth_failure(exc: AtProtocolError) -> bool:
    if isinstance(exc, LoginRequiredError):
        return True
    if not isinstance(exc, RequestErrorBase) or exc.response is None:
        return False
    error, _ = _xrpc_error(exc)
    if isinstance(exc, UnauthorizedError):
        return exc.response.status_code == 401 or error in _AUTH_ERRORS
    return isinstance(exc, BadRequestError) and error in _AUTH_ERRORS


def _login_refused(exc: AtProtocolError) -> bool:
    """createSession refused the credentials (not a rate limit, outage or network failure)."""
    if not isinstance(exc, RequestErrorBase) or exc.response is None:
        return False
    error, _ = _xrpc_error(exc)
    return exc.response.status_code in (401, 403) or error in _LOGIN_REFUSED


def _translate(exc: AtProtocolError, endpoint: str, *, posting: bool) -> PlatformError:
    """One typed PlatformError for an atproto failure; never sleeps, never hides the cause."""
    if isinstance(exc, RateLimitExceededError):
        return RateLimited(f"Bluesky {endpoint}: rate limited", reset_at=exc.reset_at)
    if not isinstance(exc, RequestErrorBase):
        return PlatformError(f"Bluesky {endpoint}: {type(exc).__name__}: {exc}", retryable=False)
    if exc.response is None:  # transport failure or timeout
        return PlatformError(
            f"Bluesky {endpoint}: network failure ({type(exc).__name__})", retryable=True
        )
    status = exc.response.status_code
    error, message = _xrpc_error(exc)
    detail = f"Bluesky {endpoint}: {status} " + ": ".join(p for p in (error, message[:200]) if p)
    if status == 429:
        reset = _int_or_none(exc.response.headers.get("ratelimit-reset"))
        return RateLimited(
            detail, reset_at=datetime.fromtimestamp(reset, tz=UTC) if reset else None
        )
    if status >= 500 or status in (408, 409):
        return PlatformError(detail, retryable=True, status=status)
    if error in _NOT_FOUND_ERRORS:
        return _NotFound(detail, retryable=False, status=status)
    if posting and (status == 403 or (status == 400 and _refuses_reply(error, message))):
        return ReplyForbidden(detail, status=status)
    return PlatformError(detail, retryable=False, status=status)


def _refuses_reply(error: str, message: str) -> bool:
    text = f"{error} {message}".lower()
    return any(word in text for word in ("reply", "threadgate", "thread gate", "blocked"))


# --------------------------------------------------------------------- small helpers


def _write_private(path: Path, text: str) -> None:
    """Write atomically with mode 0600: a session string is a credential."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _now() -> datetime:
    return datetime.now(UTC)


def _parse_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(_LONG_FRACTION.sub(r"\1", value.strip()))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def _server_time(value: str) -> datetime:
    try:
        return _parse_time(value)
    except ValueError as exc:
        raise PlatformError(
            f"Bluesky sent a malformed timestamp: {value!r}", retryable=False
        ) from exc


def _parse_time_or(value: str | None, fallback: str) -> datetime:
    """A record's own (client-set, possibly odd) time, else the server's indexing time."""
    if value:
        with suppress(ValueError):
            return _parse_time(value)
    return _server_time(fallback)


def _parse_cursor(cursor: str | None) -> datetime | None:
    if not cursor:
        return None
    try:
        return _parse_time(cursor)
    except ValueError as exc:
        raise ValueError(f"not a Bluesky cursor (an indexedAt timestamp): {cursor!r}") from exc


def _uri_authority(uri: str) -> str:
    return uri.removeprefix("at://").split("/", 1)[0]


def _permalink(handle: str | None, did: str, uri: str) -> str:
    actor = handle if handle and handle != "handle.invalid" else did
    return f"https://bsky.app/profile/{actor}/post/{uri.rsplit('/', 1)[-1]}"


def _int_or_none(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None
