"""Replies out: one per summons under a derived record key, found again in our own repo.

Each reply is created with a record key derived from the summons (`reply_record_key`,
TID-shaped as app.bsky.feed.post's lexicon asks), so a retried `createRecord` cannot make a
second post: the PDS refuses a create on an existing key (the MST add fails), and the adapter
then reads that key back as the receipt. `find_reply` reads our own repo on the PDS
(`com.atproto.repo.getRecord` for that key, then `listRecords`), never the AppView, which may
not have indexed a reply made just before a crash. The PDS does not enforce thread gates (a
gated reply is stored and silently hidden), so `viewer.replyDisabled` of the summoning post is
read again right before posting (review mode can wait hours).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from functools import partial
from hashlib import sha256
from typing import Any

from atproto import Session, models

from adapters.base import (
    AccessDenied,
    PlatformError,
    RateLimited,
    ReplyForbidden,
    ReplyReceipt,
    Summons,
)
from adapters.bluesky.client import PAGE_LIMIT, BlueskyClient
from adapters.bluesky.errors import NotFound
from adapters.bluesky.records import POST_COLLECTION, replies_to
from adapters.bluesky.text import reply_text_builder
from adapters.bluesky.times import now, parse_time
from adapters.bluesky.views import permalink

FIND_REPLY_PAGES = 2  # listRecords pages of our own posts read by find_reply
_TID_CHARS = "234567abcdefghijklmnopqrstuvwxyz"


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


def post_reply(
    client: BlueskyClient, summons: Summons, text: str, links: Sequence[str] = ()
) -> ReplyReceipt:
    if not summons.reply_allowed:
        raise ReplyForbidden(f"replies to {summons.id} are disabled by a thread gate")
    me = client.ensure_login()
    builder = reply_text_builder(text, links)
    # The gate may have changed since intake (review can take hours), and the PDS would
    # store a gated reply that nobody sees: ask again now.
    view = _summons_view(client, summons.id)
    ctx = dict(summons.reply_context)
    if not all(ctx.get(k) for k in ("root_uri", "root_cid", "parent_uri", "parent_cid")):
        ctx.update(_reply_refs(view))
    reply_to = models.AppBskyFeedPost.ReplyRef(
        root=models.ComAtprotoRepoStrongRef.Main(uri=ctx["root_uri"], cid=ctx["root_cid"]),
        parent=models.ComAtprotoRepoStrongRef.Main(uri=ctx["parent_uri"], cid=ctx["parent_cid"]),
    )
    # The record send_post would write (atproto_client/client/client.py), with our own key.
    record = models.AppBskyFeedPost.Record(
        created_at=client.sdk.get_current_time_iso(),
        text=builder.build_text(),
        facets=builder.build_facets() or None,
        reply=reply_to,
        langs=[ctx["lang"]] if ctx.get("lang") else None,
    )
    rkey = reply_record_key(summons)
    try:
        created = client.call(
            "createRecord",
            lambda: client.sdk.app.bsky.feed.post.create(me.did, record, rkey=rkey),
            posting=True,
        )
    except (RateLimited, ReplyForbidden, AccessDenied):
        raise
    except PlatformError:
        # A create on a key that exists fails (the repo's MST refuses a second value at a
        # key): our reply may be there from an attempt whose answer was lost.
        existing = _own_reply(client, me, rkey, summons.id)
        if existing is not None:
            return existing
        raise
    return ReplyReceipt(
        reply_id=created.uri, url=permalink(me.handle, me.did, created.uri), posted_at=now()
    )


def find_reply(client: BlueskyClient, summons: Summons) -> ReplyReceipt | None:
    """Our reply to `summons`, read from our own repo on the PDS (never the AppView)."""
    me = client.ensure_login()
    found = _own_reply(client, me, reply_record_key(summons), summons.id)
    if found is not None:
        return found
    # Replies created before record keys were derived from the summons: our newest posts.
    cursor: str | None = None
    for _ in range(FIND_REPLY_PAGES):
        resp = client.call(
            "listRecords",
            partial(
                client.sdk.com.atproto.repo.list_records,
                models.ComAtprotoRepoListRecords.Params(
                    repo=me.did, collection=POST_COLLECTION, limit=PAGE_LIMIT, cursor=cursor
                ),
            ),
        )
        for item in resp.records:
            if replies_to(item.value, summons.id):
                return _record_receipt(item.uri, item.value, me)
        cursor = resp.cursor
        if not cursor or not resp.records:
            break
    return None


def _summons_view(client: BlueskyClient, uri: str) -> Any:
    """The summoning post's view as we see it now; ReplyForbidden if we may not answer."""
    try:
        resp = client.call(
            "getPostThread",
            lambda: client.sdk.get_post_thread(uri, depth=0, parent_height=0),
        )
    except NotFound as exc:
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


def _reply_refs(view: Any) -> dict[str, str]:
    """Our reply's root and parent: the summons' own root (or the summons), and the summons."""
    reply = view.record.reply
    return {
        "root_uri": reply.root.uri if reply is not None else view.uri,
        "root_cid": reply.root.cid if reply is not None else view.cid,
        "parent_uri": view.uri,
        "parent_cid": view.cid,
    }


def _own_reply(
    client: BlueskyClient, me: Session, rkey: str, summons_uri: str
) -> ReplyReceipt | None:
    """Our post at `rkey` in our own repo, if it answers `summons_uri`."""
    try:
        got = client.call(
            "getRecord",
            lambda: client.sdk.com.atproto.repo.get_record(
                models.ComAtprotoRepoGetRecord.Params(
                    repo=me.did, collection=POST_COLLECTION, rkey=rkey
                )
            ),
        )
    except NotFound:
        return None
    if not replies_to(got.value, summons_uri):
        return None
    return _record_receipt(got.uri, got.value, me)


def _record_receipt(uri: str, record: Any, me: Session) -> ReplyReceipt:
    created = getattr(record, "created_at", None)
    posted_at = now()
    if created:
        with suppress(ValueError):
            posted_at = parse_time(created)
    return ReplyReceipt(reply_id=uri, url=permalink(me.handle, me.did, uri), posted_at=posted_at)
