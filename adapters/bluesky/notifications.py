"""Summons in: `listNotifications` paging, the overlap cursor, and building each `Summons`.

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
  (platform, id) uniqueness after a restart. Without a cursor (first run) only the newest page
  that holds any summons is read, so a fresh deployment never answers a long backlog; the
  runtime's age limits apply on top.
- Empty pages. The AppView filters `reasons` after it reads a page of every kind
  (packages/bsky/src/api/app/bsky/notification/listNotifications.ts, `paginateNotifications`;
  `fillPage` reads at most 10 such pages to half-fill one), so a page of likes and follows comes
  back empty *with* a cursor: paging goes on while a cursor comes back that is newer than ours.
  `priority=false` is sent because without it the AppView applies the account's "priority
  notifications" setting (`getPriority`), which hears only from followed accounts.
- Bad input. Each notification of a page is read on its own (the SDK's typed call fails the whole
  page when one does not fit the lexicon); one that cannot be read is a recorded, skipped summons
  (`BadNote`), never an exception that fails the poll; so is one nested deeper than
  `MAX_ITEM_DEPTH` levels (a body too deep for the SDK's parser is cut first, `depth.py`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from hashlib import sha256
from typing import Any

from atproto import Session, models
from atproto_client.models.utils import get_or_create
from atproto_core.exceptions import AtProtocolError
from pydantic import ValidationError

from adapters.base import (
    FetchResult,
    PlatformError,
    Summons,
    TargetStatus,
    readable_text,
    storable,
    unreadable_summons,
)
from adapters.bluesky.client import PAGE_LIMIT, BlueskyClient
from adapters.bluesky.depth import MAX_ITEM_DEPTH, nesting_depth
from adapters.bluesky.posts import PostReader, Resolution
from adapters.bluesky.records import facet_mentions, post_record, quoted_ref
from adapters.bluesky.times import is_time, now, parse_time, parse_time_or, server_time
from adapters.bluesky.views import permalink, uri_authority

_log = logging.getLogger(__name__)

SUMMONS_REASONS = ("mention",)
# Admitted only when the record itself carries a mention facet for our DID.
_FACET_REASONS = frozenset({"reply", "quote"})
DEFAULT_OVERLAP = timedelta(minutes=10)
MAX_PAGES = 5


@dataclass(frozen=True)
class BadNote:
    """A notification that could not be read: recorded as a skipped summons, keyed by its post
    uri when it has one (so a later read of the same notification is the same request)."""

    uri: str
    indexed_at: str  # "" when unreadable (then it does not move the cursor)
    problem: str
    author: str = ""

    @classmethod
    def of(cls, note: Any, problem: str) -> BadNote:
        author = getattr(getattr(note, "author", None), "handle", "") or ""
        return cls(note.uri, note.indexed_at or "", problem, author)

    def summons(self) -> Summons:
        when = now()
        if self.indexed_at:
            with suppress(ValueError):
                when = parse_time(self.indexed_at)
        return unreadable_summons(
            "bluesky", self.uri, self.problem, created_at=when, author=self.author
        )


class NotificationReader:
    """Reads the summons newer than a cursor; remembers what it returned in this process."""

    def __init__(
        self,
        client: BlueskyClient,
        posts: PostReader,
        is_bot: Callable[[Any], bool],
        *,
        overlap: timedelta = DEFAULT_OVERLAP,
    ) -> None:
        self._client = client
        self._posts = posts
        self._is_bot = is_bot
        self._overlap = overlap
        # Summons this process returned with a new cursor: uri -> (sort time, that cursor). The
        # overlap reads them again; once the runtime passes that cursor back (it stores a cursor
        # only in the transaction that stored the rows), they are not resolved again.
        self._returned: dict[str, tuple[datetime, datetime]] = {}

    def fetch(self, cursor: str | None) -> FetchResult:
        since = _parse_cursor(cursor)
        # Taken before listing, so anything indexed during the fetch stays unread.
        seen_at = now().isoformat()
        me = self._client.ensure_login()
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
        newest = max((server_time(n.indexed_at) for n in fresh), default=None)
        if newest is None or (since is not None and newest <= since):
            # Only the overlap was read again: nothing newer than the cursor.
            return FetchResult(summons=summonses, cursor=None)
        sdk = self._client.sdk
        self._client.call(
            "updateSeen",
            lambda: sdk.app.bsky.notification.update_seen(
                models.AppBskyNotificationUpdateSeen.Data(seen_at=seen_at)
            ),
        )
        for note in fresh:
            if note.uri in done:
                self._returned[note.uri] = (server_time(note.indexed_at), newest)
        horizon = newest - self._overlap
        self._returned = {u: v for u, v in self._returned.items() if v[0] > horizon}
        latest = max(fresh, key=lambda n: server_time(n.indexed_at))
        return FetchResult(summons=summonses, cursor=latest.indexed_at)

    def _committed(self, uri: str, since: datetime | None) -> bool:
        returned = self._returned.get(uri)
        return returned is not None and since is not None and returned[1] <= since

    def _read_summons(self, note: Any, me: Session) -> Summons | None:
        """The summons of one notification, None when it does not summon us. One that cannot
        be read is a recorded, skipped summons: never an exception that fails the poll (only
        a retryable platform failure, which the next poll tries again, is raised)."""
        if isinstance(note, BadNote):
            return note.summons()
        try:
            record, notes = post_record(note.record, note.indexed_at)
            if record is None:
                if note.reason not in SUMMONS_REASONS:
                    return None  # a reply/quote we cannot read cannot show a mention of us
                return BadNote.of(note, "; ".join(notes)).summons()
            if not _summons_us(note.reason, record, me.did):
                return None
            return self._build_summons(note, record, notes, me)
        except PlatformError as exc:
            if exc.retryable:
                raise
            return BadNote.of(note, str(exc)).summons()
        except Exception as exc:  # a shape this code did not foresee: record it
            _log.exception("Bluesky notification %s could not be read", note.uri)
            return BadNote.of(note, f"{type(exc).__name__}: {exc}").summons()

    def _new_notifications(self, since: datetime | None) -> list[Any]:
        """The notifications newer than `since`, newest first; without `since`, the newest
        page that holds any. A page may come back empty with a cursor (the AppView filters
        `reasons` after reading a page of every kind): paging goes on past it until the cursor
        reaches `since` or stops coming back, `MAX_PAGES` at most."""
        fresh: list[Any] = []
        page_cursor: str | None = None
        for _ in range(MAX_PAGES):
            # priority=False: an account with "priority notifications" on would otherwise hear
            # only from accounts it follows (the AppView reads the account's own setting when
            # the parameter is absent).
            params = models.AppBskyNotificationListNotifications.Params(
                limit=PAGE_LIMIT, reasons=list(SUMMONS_REASONS), cursor=page_cursor, priority=False
            )
            notes, next_cursor = self._client.call(
                "listNotifications", partial(self._list_notifications, params)
            )
            for note in notes:
                if since is not None and note.indexed_at and server_time(note.indexed_at) <= since:
                    return fresh
                fresh.append(note)
            if not next_cursor or _cursor_reached(next_cursor, since):
                return fresh
            if since is None and fresh:
                return fresh  # first run: the newest summonses only
            page_cursor = next_cursor
        if since is not None:
            _log.warning(
                "Bluesky notifications: stopped after %d pages before reaching %s; older ones "
                "are skipped",
                MAX_PAGES,
                since.isoformat(),
            )
        return fresh

    def _list_notifications(self, params: Any) -> tuple[list[Any], str | None]:
        """One page of notifications, each read on its own (the SDK's typed call fails the
        whole page when one notification does not fit the lexicon): the readable ones as SDK
        models, the others as `BadNote`s."""
        response = self._client.sdk.invoke_query(
            "app.bsky.notification.listNotifications",
            params=params,
            output_encoding="application/json",
        )
        body = response.content if isinstance(response.content, dict) else {}
        items = body.get("notifications")
        notes = [read_notification(item) for item in items] if isinstance(items, list) else []
        cursor = body.get("cursor")
        return notes, cursor if isinstance(cursor, str) else None

    def _build_summons(self, note: Any, record: Any, notes: list[str], me: Session) -> Summons:
        author = note.author
        reply = record.reply
        parent_uri: str | None = reply.parent.uri if reply is not None else None
        quoted = quoted_ref(record.embed)
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
            res = self._posts.resolve(note.uri, parent_uri, quoted.uri if quoted else None)
        except PlatformError as exc:
            if exc.retryable:
                raise
            res = Resolution(None, TargetStatus.UNAVAILABLE, reason=str(exc))
        return Summons(
            platform="bluesky",
            id=note.uri,
            author=author.handle,
            author_id=author.did,
            text=readable_text(record.text, notes),
            created_at=parse_time_or(record.created_at, note.indexed_at),
            url=permalink(author.handle, author.did, note.uri),
            parent_id=parent_uri,
            quoted_id=quoted.uri if quoted else None,
            reply_context=ctx,
            target=res.target,
            target_status=res.status,
            target_reason=res.reason,
            replies_to_bot=parent_uri is not None and uri_authority(parent_uri) == me.did,
            author_is_bot=self._is_bot(author),
            reply_allowed=res.reply_allowed,
            notes=notes,
        )


def read_notification(item: Any) -> Any:
    """One notification as the SDK's model, or a `BadNote` saying why it cannot be read."""
    raw = item if isinstance(item, dict) else {}
    uri = raw.get("uri")
    if not isinstance(uri, str) or not uri:
        digest = sha256(json.dumps(item, sort_keys=True, default=str).encode()).hexdigest()
        uri = f"malformed:bluesky:sha256-{digest[:16]}"
    indexed = raw.get("indexedAt")
    indexed_at = indexed if isinstance(indexed, str) and is_time(indexed) else ""
    if nesting_depth(item, MAX_ITEM_DEPTH) > MAX_ITEM_DEPTH:
        # Read no further: a stranger's unknown field can nest any depth (see depth.py).
        author = raw.get("author")
        handle = author.get("handle") if isinstance(author, dict) else None
        why = f"nested deeper than {MAX_ITEM_DEPTH} levels: not read"
        return BadNote(
            uri, indexed_at, why, storable(handle)[:256] if isinstance(handle, str) else ""
        )
    try:
        note = get_or_create(item, models.AppBskyNotificationListNotifications.Notification)
    except (AtProtocolError, ValueError) as exc:
        return BadNote(uri, indexed_at, _model_problem(exc))
    if not indexed_at:
        why = f"indexedAt is not a date-time: {storable(repr(indexed))[:60]}"
        return BadNote(uri, "", why, note.author.handle)
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


def _summons_us(reason: str, record: Any, did: str) -> bool:
    """A `mention`, or a reply/quote whose record has a mention facet for `did`."""
    if reason in SUMMONS_REASONS:
        return True
    return reason in _FACET_REASONS and did in facet_mentions(record.facets)


def _cursor_reached(page_cursor: str, since: datetime | None) -> bool:
    """Whether a page cursor already lies at or before `since`. The AppView's cursor is the
    sort time of the last notification it read (`IsoSortAtKey`); one that is not a time is
    followed (bounded by `MAX_PAGES`)."""
    if since is None:
        return False
    try:
        return parse_time(page_cursor) <= since
    except ValueError:
        return False


def _parse_cursor(cursor: str | None) -> datetime | None:
    if not cursor:
        return None
    try:
        return parse_time(cursor)
    except ValueError as exc:
        raise ValueError(f"not a Bluesky cursor (an indexedAt timestamp): {cursor!r}") from exc
