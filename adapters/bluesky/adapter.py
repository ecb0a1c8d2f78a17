"""`BlueskyAdapter`: the `adapters.base.Adapter` for Bluesky, assembled from this package's
parts (the client, the notification and post readers, replies, the profile label)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from atproto import Client

from adapters.base import FetchResult, RateBudget, ReplyReceipt, SocialPost, Summons, VideoCaps
from adapters.bluesky import profile, replies
from adapters.bluesky.client import BlueskyClient, BlueskyCredentials
from adapters.bluesky.notifications import DEFAULT_OVERLAP, NotificationReader
from adapters.bluesky.posts import PostReader
from adapters.bluesky.profile import BotLabelResult
from adapters.bluesky.video import DEFAULT_PLC, VideoFiles
from adapters.bluesky.views import is_bot


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
        video_caps: VideoCaps | None = None,
        plc_url: str = DEFAULT_PLC,
    ) -> None:
        """`video_caps`: locate each video's blob on its author's PDS, within these caps (DIDs
        resolved in the PLC directory at `plc_url`); None: videos are recorded, not read."""
        if overlap < timedelta(0):
            raise ValueError("overlap must not be negative")
        self._client = BlueskyClient(creds, session_path=session_path, client=client)
        self._known_bots = frozenset(b.strip().lstrip("@").lower() for b in known_bots)
        videos = VideoFiles(video_caps, plc_url=plc_url) if video_caps is not None else None
        self._posts = PostReader(
            self._client, self._is_bot, videos.file_of if videos is not None else None
        )
        self._notifications = NotificationReader(
            self._client, self._posts, self._is_bot, overlap=overlap
        )

    # ----------------------------------------------------------------- Adapter interface

    def fetch_summons(self, cursor: str | None) -> FetchResult:
        return self._notifications.fetch(cursor)

    def post_reply(self, summons: Summons, text: str, links: Sequence[str] = ()) -> ReplyReceipt:
        return replies.post_reply(self._client, summons, text, links)

    def find_reply(self, summons: Summons) -> ReplyReceipt | None:
        """Our reply to `summons`, read from our own repo on the PDS (never the AppView)."""
        return replies.find_reply(self._client, summons)

    def recent_posts(
        self, user: str, *, limit: int = 50, since: datetime | None = None
    ) -> list[SocialPost]:
        return self._posts.recent_posts(user, limit=limit, since=since)

    def budgets(self) -> list[RateBudget]:
        return self._client.budgets()

    # ----------------------------------------------------------------- account setup

    def ensure_bot_label(self) -> BotLabelResult:
        """Give the profile the `bot` self-label, keeping every other field. Idempotent."""
        return profile.ensure_bot_label(self._client)

    # ----------------------------------------------------------------- session

    @property
    def login_halted(self) -> str | None:
        """Why logging in has stopped (credentials refused), or None while it may log in."""
        return self._client.login_halted

    @property
    def password_logins(self) -> int:
        """createSession calls made by this adapter."""
        return self._client.password_logins

    @property
    def relogins(self) -> int:
        """Of the password logins, the ones forced by a rejected session."""
        return self._client.relogins

    def _is_bot(self, author: Any) -> bool:
        return is_bot(author, self._known_bots)
