"""Reading posts: the post a summons asks about, and an author's recent posts.

One `getPostThread(summons, depth=0, parentHeight=1)` per summons gives the summons view
(`viewer.replyDisabled`, quote embed view) and its parent (post, `notFoundPost` or
`blockedPost`). A quoted post is read from the summons' `app.bsky.embed.record#view`; only
when neither says enough is the post asked for by uri (`getPosts`). Authority timelines are
`getAuthorFeed(filter=posts_no_replies)` with reposts skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any

from atproto import models

from adapters.base import PlatformError, SocialPost, TargetStatus
from adapters.bluesky.client import PAGE_LIMIT, BlueskyClient
from adapters.bluesky.errors import NotFound
from adapters.bluesky.records import quoted_ref
from adapters.bluesky.times import server_time
from adapters.bluesky.views import VideoFile, post_from_record_view, post_from_view

_log = logging.getLogger(__name__)

MAX_FEED_PAGES = 10


@dataclass(frozen=True)
class Resolution:
    target: SocialPost | None
    status: TargetStatus
    reason: str = ""
    reply_allowed: bool = True


class PostReader:
    """Reads posts through `client`; `is_bot` tells the authors that are bots; `videos`
    locates a video's file (none: videos are recorded, not analysed)."""

    def __init__(
        self,
        client: BlueskyClient,
        is_bot: Callable[[Any], bool],
        videos: VideoFile | None = None,
    ) -> None:
        self._client = client
        self._is_bot = is_bot
        self._videos = videos

    def resolve(self, uri: str, parent_uri: str | None, quoted_uri: str | None) -> Resolution:
        """The asked-about post: the quoted one if any, else the parent, else the summons."""
        sdk = self._client.sdk
        try:
            resp = self._client.call(
                "getPostThread",
                lambda: sdk.get_post_thread(uri, depth=0, parent_height=1),
            )
        except NotFound:
            return Resolution(
                None, TargetStatus.UNAVAILABLE, "the summoning post is deleted", False
            )
        thread = resp.thread
        if isinstance(thread, models.AppBskyFeedDefs.BlockedPost):
            return Resolution(
                None, TargetStatus.UNAVAILABLE, "the summoning post is blocked", False
            )
        if not isinstance(thread, models.AppBskyFeedDefs.ThreadViewPost):
            return Resolution(
                None, TargetStatus.UNAVAILABLE, "the summoning post is not readable", False
            )
        view = thread.post
        allowed = not (view.viewer is not None and view.viewer.reply_disabled)
        if quoted_uri is not None:
            return self._resolve_quoted(view, quoted_uri, allowed)
        if parent_uri is not None:
            return self._resolve_parent(thread.parent, parent_uri, allowed)
        return Resolution(
            post_from_view(view, self._is_bot, self._videos), TargetStatus.SELF, "", allowed
        )

    def _resolve_parent(self, parent: Any, parent_uri: str, allowed: bool) -> Resolution:
        if isinstance(parent, models.AppBskyFeedDefs.ThreadViewPost):
            target = post_from_view(parent.post, self._is_bot, self._videos)
            return Resolution(target, TargetStatus.OK, reply_allowed=allowed)
        if isinstance(parent, models.AppBskyFeedDefs.NotFoundPost):
            return Resolution(None, TargetStatus.MISSING, "parent post not found", allowed)
        if isinstance(parent, models.AppBskyFeedDefs.BlockedPost):
            return Resolution(None, TargetStatus.BLOCKED, "parent post is blocked", allowed)
        return self._resolve_by_uri(parent_uri, allowed)

    def _resolve_quoted(self, view: Any, quoted_uri: str, allowed: bool) -> Resolution:
        embedded = quoted_ref(view.embed, view=True)
        if isinstance(embedded, models.AppBskyEmbedRecord.ViewRecord):
            target = post_from_record_view(embedded, self._is_bot, self._videos)
            if target is not None:
                return Resolution(target, TargetStatus.OK, reply_allowed=allowed)
        if isinstance(embedded, models.AppBskyEmbedRecord.ViewNotFound):
            return Resolution(None, TargetStatus.MISSING, "quoted post not found", allowed)
        if isinstance(embedded, models.AppBskyEmbedRecord.ViewBlocked):
            return Resolution(None, TargetStatus.BLOCKED, "quoted post is blocked", allowed)
        if isinstance(embedded, models.AppBskyEmbedRecord.ViewDetached):
            return Resolution(
                None, TargetStatus.UNAVAILABLE, "quoted post detached by its author", allowed
            )
        return self._resolve_by_uri(quoted_uri, allowed)

    def _resolve_by_uri(self, uri: str, allowed: bool) -> Resolution:
        resp = self._client.call("getPosts", lambda: self._client.sdk.get_posts([uri]))
        for view in resp.posts:
            if view.uri == uri:
                return Resolution(
                    post_from_view(view, self._is_bot, self._videos),
                    TargetStatus.OK,
                    reply_allowed=allowed,
                )
        return Resolution(None, TargetStatus.MISSING, "post not returned by getPosts", allowed)

    def recent_posts(
        self, user: str, *, limit: int = 50, since: datetime | None = None
    ) -> list[SocialPost]:
        if since is not None and since.tzinfo is None:
            since = since.replace(tzinfo=UTC)
        self._client.ensure_login()
        posts: list[SocialPost] = []
        cursor: str | None = None
        for _ in range(MAX_FEED_PAGES):
            resp = self._client.call(
                "getAuthorFeed",
                partial(
                    self._client.sdk.get_author_feed,
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
                    post = post_from_view(item.post, self._is_bot, self._videos)
                except PlatformError as exc:  # a post that cannot be read: the others can
                    _log.warning("Bluesky feed of %s: %s", user, exc)
                    continue
                # The feed is ordered by the earlier of createdAt and indexedAt.
                sort_at = min(post.created_at, server_time(item.post.indexed_at))
                if since is not None and sort_at < since:
                    return posts
                posts.append(post)
                if len(posts) >= limit:
                    return posts
            cursor = resp.cursor
            if not cursor or not resp.feed:
                break
        return posts
