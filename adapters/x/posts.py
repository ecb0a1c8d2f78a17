"""Posts as `SocialPost` records: from a page's post and its expansions, and a user's timeline.

A long post is truncated in `text`; the whole of it and its entities live in `note_tweet`.
Media and the quoted post's permalink are carried as media and `quoted`, not as links. An
included object that could not be read is left out and remembered: a quoted post that was it
becomes a note, a media key an `unsupported` attachment with a note. The API exposes no
"automated account" flag on users (the user object has `verified_type`, `affiliation`,
`subscription_type`, none of which marks bots), so other bots are recognised only through the
configured `known_bots` handles or ids.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime
from typing import TypedDict

import tweepy

from adapters.base import (
    VIDEO_KINDS,
    MediaRef,
    PlatformError,
    SocialPost,
    VideoCaps,
    readable_text,
)
from adapters.x.api import (
    MEDIA_FIELDS,
    TWEET_FIELDS,
    USER_FIELDS,
    Includes,
    Tweet,
    User,
    UserLookup,
    parse,
)
from adapters.x.client import XClient
from adapters.x.video import video_file

PERMALINK = "https://x.com/{username}/status/{id}"
# Snowflake ids carry their creation time; used when a response omits `created_at`.
_TWITTER_EPOCH_MS = 1288834974657
TIMELINE_EXPANSIONS = [
    "author_id",
    "referenced_tweets.id",
    "referenced_tweets.id.author_id",
    "attachments.media_keys",
]


class TweetFields(TypedDict):
    """What a `SocialPost` and a `Summons` read the same way from a tweet."""

    id: str
    author: str
    author_id: str | None
    text: str
    created_at: datetime
    url: str
    author_is_bot: bool
    notes: list[str]


class PostReader:
    """Reads posts as the bot (`bot_user_id`) sees them; `known_bots` are handles or ids;
    a video's file is chosen within `video_caps`."""

    def __init__(
        self,
        client: XClient,
        bot_user_id: str,
        known_bots: Collection[str],
        *,
        max_pages: int,
        video_caps: VideoCaps = VideoCaps(),
    ) -> None:
        self._client = client
        self._bot_user_id = bot_user_id
        self._known_bots = {b.lstrip("@").lower() for b in known_bots}
        self._max_pages = max_pages
        self._video_caps = video_caps

    def is_bot(self, user_id: str | None, username: str) -> bool:
        if user_id is not None and user_id == self._bot_user_id:
            return True
        return username.lower() in self._known_bots or (user_id or "") in self._known_bots

    def fields(self, tweet: Tweet, username: str, notes: list[str]) -> TweetFields:
        """The tweet's own fields; a cut made to its text is added to `notes`."""
        return TweetFields(
            id=tweet.id,
            author=username,
            author_id=tweet.author_id,
            text=readable_text(full_text(tweet), notes),
            created_at=tweet.created_at or snowflake_time(tweet.id),
            url=PERMALINK.format(username=username or "i", id=tweet.id),
            author_is_bot=self.is_bot(tweet.author_id, username),
            notes=notes,
        )

    def post(
        self, tweet: Tweet, includes: Includes, *, fallback_author: User | None = None
    ) -> SocialPost:
        author = user_of(includes, tweet.author_id) or fallback_author
        username = author.username if author else ""
        quoted_id = tweet.reference("quoted")
        quoted = next((t for t in includes.tweets if t.id == quoted_id), None)
        notes: list[str] = []
        if quoted_id is not None and quoted is None and quoted_id in includes.unreadable:
            notes.append(f"quoted post could not be read: {includes.unreadable[quoted_id]}")
        return SocialPost(
            **self.fields(tweet, username, notes),
            lang=tweet.lang,
            links=_links(tweet),
            media=_media(tweet, includes, self._video_caps),
            quoted=self.post(quoted, includes) if quoted is not None else None,
        )

    def recent_posts(
        self, user: str, *, limit: int = 50, since: datetime | None = None
    ) -> list[SocialPost]:
        """`user`'s own posts (retweets left out), newest first."""
        if limit <= 0:
            return []
        username = user.lstrip("@")
        api = self._client.api
        lookup = parse(
            UserLookup,
            self._client.call(
                "GET /2/users/by/username/:username",
                lambda: api.get_user(username=username, user_auth=True),
            ),
            "user lookup",
        )
        if lookup.data is None:
            reason = "; ".join(e.detail for e in lookup.errors) or "no such user"
            raise PlatformError(f"X user @{username}: {reason}", retryable=False, status=404)
        pages = tweepy.Paginator(
            api.get_users_tweets,
            lookup.data.id,
            user_auth=True,
            start_time=since,
            exclude=["retweets"],
            max_results=min(100, max(5, limit)),
            expansions=TIMELINE_EXPANSIONS,
            tweet_fields=TWEET_FIELDS,
            media_fields=MEDIA_FIELDS,
            user_fields=USER_FIELDS,
            limit=self._max_pages,
        )
        posts: list[SocialPost] = []
        for page in self._client.pages(pages, "user timeline"):
            for tweet in page.data:
                posts.append(self.post(tweet, page.includes, fallback_author=lookup.data))
                if len(posts) >= limit:
                    return posts
        return posts


def user_of(includes: Includes, user_id: str | None) -> User | None:
    return next((u for u in includes.users if u.id == user_id), None) if user_id else None


def full_text(tweet: Tweet) -> str:
    # Long posts are truncated in `text`; the whole of it lives in `note_tweet`.
    return tweet.note_tweet.text if tweet.note_tweet else tweet.text


def snowflake_time(tweet_id: str) -> datetime:
    return datetime.fromtimestamp(((int(tweet_id) >> 22) + _TWITTER_EPOCH_MS) / 1000, UTC)


def _links(tweet: Tweet) -> list[str]:
    entities = tweet.note_tweet.entities if tweet.note_tweet else None
    entities = entities or tweet.entities
    if entities is None:
        return []
    quoted_id = tweet.reference("quoted")
    links: list[str] = []
    for entity in entities.urls:
        link = entity.expanded_url or entity.url
        # Media and the quoted post's permalink are carried as media and `quoted`, not links.
        if not link or entity.media_key or (quoted_id and link.endswith(f"/status/{quoted_id}")):
            continue
        if link not in links:
            links.append(link)
    return links


def _media(tweet: Tweet, includes: Includes, caps: VideoCaps) -> list[MediaRef]:
    """Each attachment, readable or not: a photo by its URL, a video or GIF by its preview
    image with its smallest MP4 within `caps` as `video_url` (adapters.x.video; none: a note
    says why), and one that the response does not include or gives no URL for, with a note
    instead of being dropped."""
    if tweet.attachments is None:
        return []
    by_key = {m.media_key: m for m in includes.media}
    refs = []
    for key in tweet.attachments.media_keys:
        item = by_key.get(key)
        if item is None:
            problem = includes.unreadable.get(key, "not included in the response")
            refs.append(MediaRef(url="", kind="unsupported", note=f"media {key}: {problem}"))
            continue
        url = item.url or item.preview_image_url
        note = None if url else f"media {key}: no URL in the response"
        video_url = None
        if item.type in VIDEO_KINDS:
            video_url, no_file = video_file(item, caps)
            note = note or no_file
        refs.append(
            MediaRef(
                url=url or "",
                alt_text=item.alt_text,
                kind=item.type,
                note=note,
                video_url=video_url,
            )
        )
    return refs
