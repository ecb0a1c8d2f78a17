"""Replies out: to the mention itself, and found again on the bot's own timeline.

* Replies go to the mention itself, never to the post it answers: since 2026-02-23 self-serve
  apps may reply only to posts whose author mentioned (or quoted) the bot.
* A permission or enrolment refusal stops posting until restart (`posting_halted`) instead of
  burning the queue (see `adapters.x.errors`). So do `max_reply_refusals` reply-rule refusals
  in a row: each ends its own request, but that many in a row means X no longer lets this app
  answer the people who summon it (the rule or our reading of it changed), and every further
  reply would be refused too.
* `find_reply` reads at most `FIND_REPLY_PAGES` pages of the bot's timeline, and reads nothing
  when this process saw X refuse the last attempt to post that reply (nothing was created).
"""

from __future__ import annotations

import logging
from datetime import datetime

import tweepy

from adapters.base import (
    AccessDenied,
    PlatformError,
    RateLimited,
    ReplyForbidden,
    ReplyReceipt,
    Summons,
)
from adapters.x.api import CreateResult, parse
from adapters.x.client import XClient, XCredentials
from adapters.x.errors import is_reply_rule
from adapters.x.posts import PERMALINK, snowflake_time

log = logging.getLogger(__name__)

FIND_REPLY_PAGES = 2


class Replier:
    """Posts the bot's replies and finds them again."""

    def __init__(
        self, client: XClient, creds: XCredentials, *, max_results: int, max_refusals: int = 5
    ) -> None:
        self._client = client
        self._creds = creds
        self._max_results = max_results
        self._max_refusals = max_refusals
        self._refusals_in_row = 0
        self._posting_halted: str | None = None
        # Summons whose last post attempt in this process X refused (nothing was created).
        self._refused: set[str] = set()

    @property
    def posting_halted(self) -> str | None:
        """Why posting has stopped (a permission or enrolment refusal), or None."""
        return self._posting_halted

    def post_reply(self, summons: Summons, text: str) -> ReplyReceipt:
        """Reply to the mention itself: X lets self-serve apps answer only who summoned them."""
        if self._posting_halted is not None:
            raise AccessDenied(f"X posting stopped: {self._posting_halted}", status=403)
        api = self._client.api
        try:
            result = self._client.call(
                "POST /2/tweets",
                lambda: api.create_tweet(
                    text=text, in_reply_to_tweet_id=summons.id, user_auth=True
                ),
                replying=True,
            )
        except (RateLimited, ReplyForbidden, AccessDenied) as exc:
            self._refused.add(summons.id)  # X answered, and created nothing
            if isinstance(exc, AccessDenied):
                self._halt(str(exc))
            elif isinstance(exc, ReplyForbidden) and is_reply_rule(exc):
                self._refusals_in_row += 1
                if self._refusals_in_row >= self._max_refusals:
                    self._halt(
                        f"{self._refusals_in_row} reply-rule refusals in a row (last: {exc}); "
                        "X may have changed which posts this app may answer"
                    )
            raise
        except PlatformError as exc:
            # A duplicate, a 5xx or a dropped connection: the post may exist.
            self._refused.discard(summons.id)
            if exc.status is not None and 400 <= exc.status < 500 and exc.status != 403:
                self._refused.add(summons.id)
            raise
        self._refused.discard(summons.id)
        self._refusals_in_row = 0
        created = parse(CreateResult, result, "POST /2/tweets").data
        return self._receipt(created.id, None)

    def _halt(self, why: str) -> None:
        self._posting_halted = why
        log.error("X posting stopped until restart: %s", why)

    def find_reply(self, summons: Summons) -> ReplyReceipt | None:
        """Our reply to `summons`, searched on the bot's own timeline after the mention.

        The bot's timeline (GET /2/users/:id/tweets) rather than search/recent: search needs a
        Basic or higher tier and sees only seven days, while the timeline is open to every tier
        and reaches the last 3,200 posts. Replies are always newer than the mention, so
        `since_id` bounds the walk; at most `FIND_REPLY_PAGES` pages are read (each read is
        billed). Nothing is read when this process saw X refuse the last attempt to post it.
        """
        if summons.id in self._refused:
            return None
        pages = tweepy.Paginator(
            self._client.api.get_users_tweets,
            self._creds.bot_user_id,
            user_auth=True,
            since_id=summons.id,
            max_results=self._max_results,
            tweet_fields=["created_at", "referenced_tweets"],
            limit=FIND_REPLY_PAGES,
        )
        for page in self._client.pages(pages, "bot timeline"):
            for tweet in page.data:
                if tweet.reference("replied_to") == summons.id:
                    return self._receipt(tweet.id, tweet.created_at)
        return None

    def _receipt(self, tweet_id: str, created_at: datetime | None) -> ReplyReceipt:
        return ReplyReceipt(
            reply_id=tweet_id,
            url=PERMALINK.format(username=self._creds.bot_username, id=tweet_id),
            posted_at=created_at or snowflake_time(tweet_id),
        )
