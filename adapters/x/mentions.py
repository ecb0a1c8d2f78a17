"""Summons in: the bot's mentions, read page by page, each a `Summons` with its target.

* Mentions come from GET /2/users/:id/mentions, which reaches only the newest 800 mentions of
  the account. A bot that is down long enough for more than 800 newer mentions to pile up loses
  the older ones; nothing on the API side can recover them. Each fetch also stops after
  `max_pages` pages (newest first); when a backlog is larger than that, the older remainder is
  skipped and a warning is logged, because the stored `since_id` cannot express a gap.
* Only typed mentions are summons. In a thread, X prefixes a reply with the handles of the
  thread's participants (ours included, under one of our replies); `display_text_range` marks
  where the text the author typed begins, and a mention of the bot counts only when it starts
  there or later (X API v2 OpenAPI spec: Tweet.display_text_range, entities.mentions[].start).
* The target is the quoted post, else the parent, read from the page's expansions; one the
  response could not include is told apart by its partial error (missing, withheld, blocked).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import tweepy

from adapters.base import (
    FetchResult,
    SocialPost,
    Summons,
    TargetStatus,
    storable,
    unreadable_summons,
)
from adapters.x.api import (
    MEDIA_FIELDS,
    TWEET_FIELDS,
    USER_FIELDS,
    ApiError,
    Entities,
    Tweet,
    TweetPage,
)
from adapters.x.client import XClient, XCredentials
from adapters.x.posts import PostReader, snowflake_time, user_of

log = logging.getLogger(__name__)

MENTION_EXPANSIONS = [
    "author_id",
    "referenced_tweets.id",
    "referenced_tweets.id.author_id",
    "in_reply_to_user_id",
    "attachments.media_keys",
    "referenced_tweets.id.attachments.media_keys",
]


class MentionReader:
    """Reads the bot's mentions newer than a cursor (a post id)."""

    def __init__(
        self,
        client: XClient,
        posts: PostReader,
        creds: XCredentials,
        *,
        max_results: int,
        max_pages: int,
    ) -> None:
        self._client = client
        self._posts = posts
        self._creds = creds
        self._max_results = max_results
        self._max_pages = max_pages

    def fetch(self, cursor: str | None) -> FetchResult:
        """Mentions newer than `cursor`, oldest first; the new cursor is the newest id seen.

        Without a cursor (a first run) only the newest page is read: a fresh deployment does
        not page through an old backlog (the runtime's age limit skips what is old on it). A
        post that cannot be read becomes a recorded, skipped summons and the cursor moves past
        it, so one bad item never fails every later poll."""
        pages = tweepy.Paginator(
            self._client.api.get_users_mentions,
            self._creds.bot_user_id,
            user_auth=True,
            since_id=cursor,
            max_results=self._max_results,
            expansions=MENTION_EXPANSIONS,
            tweet_fields=TWEET_FIELDS,
            media_fields=MEDIA_FIELDS,
            user_fields=USER_FIELDS,
            limit=self._max_pages if cursor is not None else 1,
        )
        summons: list[Summons] = []
        newest: str | None = None
        last: TweetPage | None = None
        for page in self._client.pages(pages, "mentions"):
            if newest is None:
                newest = page.meta.newest_id
            summons.extend(self._page_summons(page))
            last = page
        if cursor is not None and last is not None and last.meta.next_token:
            log.warning(
                "X mentions: more than %d pages since %s; older mentions in the gap are skipped",
                self._max_pages,
                cursor,
            )
        if not summons:
            return FetchResult(summons=[], cursor=newest)
        summons.sort(key=lambda s: (not s.id.isdigit(), int(s.id) if s.id.isdigit() else 0))
        ids = [s.id for s in summons if s.id.isdigit()]
        return FetchResult(summons=summons, cursor=newest or (ids[-1] if ids else None))

    def _page_summons(self, page: TweetPage) -> list[Summons]:
        """The summons of one page: each post read alone, an unreadable one recorded."""
        summons: list[Summons] = []
        for key, problem in page.unreadable:
            log.warning("X mention %s could not be read: %s", key, problem)
            summons.append(_unreadable(key, problem))
        for tweet in page.data:
            try:
                if self._typed_mention(tweet):
                    summons.append(self._summons(tweet, page))
                else:
                    log.info("X mention %s: our handle is only in the reply prefix", tweet.id)
            except Exception as exc:  # a shape this code did not foresee: record it
                log.exception("X mention %s could not be read", tweet.id)
                summons.append(_unreadable(tweet.id, f"{type(exc).__name__}: {exc}"))
        return summons

    def _typed_mention(self, tweet: Tweet) -> bool:
        """Whether the author typed a mention of the bot, not only X's reply prefix.

        Offsets of `entities.mentions` and `display_text_range` are in the same units of
        `text`; the prefix is handles and spaces, so it reads the same in any unit. A long post's
        `note_tweet` has its own entities, offset by the prefix only if its text repeats it.
        """
        if not tweet.display_text_range:
            return True  # the API did not say where the typed text starts: keep the summons
        typed_from = tweet.display_text_range[0]
        offsets: list[tuple[Entities | None, int]] = [(tweet.entities, typed_from)]
        if tweet.note_tweet is not None:
            prefix = tweet.text[:typed_from]
            note_from = typed_from if tweet.note_tweet.text.startswith(prefix) else 0
            offsets.append((tweet.note_tweet.entities, note_from))
        ours = [
            (mention, first)
            for entities, first in offsets
            if entities is not None
            for mention in entities.mentions
            if mention.id == self._creds.bot_user_id
            or mention.username.lower() == self._creds.bot_username.lower()
        ]
        if not ours:
            return True  # the entities do not show our handle at all: nothing to judge by
        return any(mention.start >= first for mention, first in ours)

    def _summons(self, tweet: Tweet, page: TweetPage) -> Summons:
        author = user_of(page.includes, tweet.author_id)
        username = author.username if author else ""
        parent_id = tweet.reference("replied_to")
        quoted_id = tweet.reference("quoted")
        target_id = quoted_id or parent_id
        target: SocialPost | None
        if target_id is None:
            # The mention carries the claim: its own links and media are the material to check.
            status, reason, target = TargetStatus.SELF, "", self._posts.post(tweet, page.includes)
        else:
            status, reason, target = self._target(target_id, page)
        context = {"conversation_id": tweet.conversation_id} if tweet.conversation_id else {}
        return Summons(
            platform="x",
            **self._posts.fields(tweet, username, []),
            parent_id=parent_id,
            quoted_id=quoted_id,
            reply_context=context,
            target=target,
            target_status=status,
            target_reason=reason,
            # in_reply_to_user_id is the parent's author: the mention answers one of our posts.
            replies_to_bot=parent_id is not None
            and tweet.in_reply_to_user_id == self._creds.bot_user_id,
        )

    def _target(
        self, target_id: str, page: TweetPage
    ) -> tuple[TargetStatus, str, SocialPost | None]:
        found = next((t for t in page.includes.tweets if t.id == target_id), None)
        if found is not None:
            post = self._posts.post(found, page.includes)
            if found.withheld and (found.withheld.copyright or found.withheld.country_codes):
                where = ", ".join(found.withheld.country_codes) or "copyright"
                return TargetStatus.WITHHELD, f"withheld: {where}", post
            return TargetStatus.OK, "", post
        error = next(
            (
                e
                for e in page.errors
                if e.subject == target_id and e.resource_type in (None, "tweet")
            ),
            None,
        )
        if error is None:
            problem = page.includes.unreadable.get(target_id)
            if problem is not None:
                return TargetStatus.UNAVAILABLE, f"post could not be read: {problem}", None
            return TargetStatus.UNAVAILABLE, "post not included in the response", None
        return _status_for(error), error.detail or error.title or error.type, None


def _status_for(error: ApiError) -> TargetStatus:
    """Map a partial error to why the post cannot be read.

    X reports protected and blocking authors alike as "not authorized"; only the wording can
    tell a block or a withholding apart, and the API's detail is kept as the reason either way.
    """
    kind = error.type.rsplit("/", 1)[-1]
    words = f"{error.title} {error.detail}".lower()
    if kind == "resource-not-found" or "could not find" in words:
        return TargetStatus.MISSING
    if "withheld" in words:
        return TargetStatus.WITHHELD
    if "block" in words:
        return TargetStatus.BLOCKED
    return TargetStatus.UNAVAILABLE


def _unreadable(key: str, problem: str) -> Summons:
    """A mention that could not be read, keyed by its id when it has a usable one."""
    ident = key if key.isdigit() else f"malformed:x:{storable(key)[:40]}"
    when = snowflake_time(key) if key.isdigit() else datetime.now(UTC)
    return unreadable_summons("x", ident, problem, created_at=when)
