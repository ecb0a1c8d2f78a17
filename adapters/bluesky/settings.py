"""The `[bluesky]` section of the settings: the bot's account and how notifications are read."""

from __future__ import annotations

from pydantic import Field, SecretStr

from adapters.base import AdapterConfig


class BlueskyAdapterConfig(AdapterConfig):
    session_path: str = "data/bluesky.session"
    # Notifications sort by min(createdAt, indexedAt): each poll reads this far behind its cursor.
    notification_overlap_s: float = Field(default=600.0, ge=0)
    # The bot's account (FACTNOTE_BLUESKY_HANDLE, _APP_PASSWORD, _PDS); unset PDS: bsky.social.
    handle: str | None = None
    app_password: SecretStr | None = None
    pds: str | None = None
    # The PLC directory where authors' did:plc documents name their PDS, from which a post's
    # video blob is read (com.atproto.sync.getBlob).
    plc_url: str = "https://plc.directory"
