"""`XAdapter`: the `adapters.base.Adapter` for X, assembled from this package's parts (the
client, the mention and post readers, the replier)."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from datetime import datetime

import tweepy

from adapters.base import FetchResult, RateBudget, ReplyReceipt, SocialPost, Summons, VideoCaps
from adapters.x.client import XClient, XCredentials, build_client
from adapters.x.mentions import MentionReader
from adapters.x.posts import PostReader
from adapters.x.replies import Replier


class XAdapter:
    """`adapters.base.Adapter` for X."""

    name = "x"

    def __init__(
        self,
        creds: XCredentials,
        *,
        client: tweepy.Client | None = None,
        max_results: int = 100,
        max_pages: int = 5,
        server_retries: int = 3,
        sleep: Callable[[float], None] = time.sleep,
        known_bots: Collection[str] = (),
        timeout_s: float = 30.0,
        backoff_s: float = 1.0,
        max_reply_refusals: int = 5,
        video_caps: VideoCaps = VideoCaps(),
    ) -> None:
        if not 5 <= max_results <= 100:
            raise ValueError("max_results must be between 5 and 100 (the API's bounds)")
        if max_pages < 1 or server_retries < 0:
            raise ValueError("max_pages must be >= 1 and server_retries >= 0")
        self._client = XClient(
            client if client is not None else build_client(creds),
            server_retries=server_retries,
            sleep=sleep,
            timeout_s=timeout_s,
            backoff_s=backoff_s,
        )
        self._posts = PostReader(
            self._client, creds.bot_user_id, known_bots, max_pages=max_pages, video_caps=video_caps
        )
        self._mentions = MentionReader(
            self._client, self._posts, creds, max_results=max_results, max_pages=max_pages
        )
        self._replier = Replier(
            self._client, creds, max_results=max_results, max_refusals=max_reply_refusals
        )

    # The Adapter interface --------------------------------------------------------------------

    def fetch_summons(self, cursor: str | None) -> FetchResult:
        """Mentions newer than `cursor`, oldest first; the new cursor is the newest id seen."""
        return self._mentions.fetch(cursor)

    def post_reply(self, summons: Summons, text: str, links: Sequence[str] = ()) -> ReplyReceipt:
        """Reply to the mention itself: X lets self-serve apps answer only who summoned them.

        X links URLs in the text itself (the guard finds every URL twitter-text would link),
        so `links` changes nothing here."""
        if summons.platform != self.name:
            raise ValueError(f"summons from {summons.platform!r} given to the X adapter")
        return self._replier.post_reply(summons, text)

    def find_reply(self, summons: Summons) -> ReplyReceipt | None:
        """Our reply to `summons`, searched on the bot's own timeline after the mention."""
        return self._replier.find_reply(summons)

    def recent_posts(
        self, user: str, *, limit: int = 50, since: datetime | None = None
    ) -> list[SocialPost]:
        """`user`'s own posts (retweets left out), newest first."""
        return self._posts.recent_posts(user, limit=limit, since=since)

    @property
    def posting_halted(self) -> str | None:
        """Why posting has stopped (a permission or enrolment refusal), or None."""
        return self._replier.posting_halted

    def budgets(self) -> list[RateBudget]:
        return self._client.budgets()
