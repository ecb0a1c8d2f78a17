"""The one small interface every platform adapter implements, and the records it speaks.

Adapters know platforms; they know nothing of the pipeline (`adapters/` never imports
`pipeline/`). The runtime turns these records into pipeline records.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

# The longest text kept of one post: X's longest posts (note_tweet) are 25,000 characters and
# Bluesky's 3,000 bytes. Anything longer is cut, and the cut is noted on the record.
MAX_TEXT_CHARS = 25_000
# Media kinds: "photo" is looked at; "video" and "animated_gif" are read from their file when
# the adapter gives one (`MediaRef.video_url`), else described to the pipeline as not analysed;
# "unsupported" is an attachment the adapter could not read (an embed type it does not know),
# recorded with a note instead of dropped.
VIDEO_KINDS = frozenset({"video", "animated_gif"})

# What the bot does with a decided reply: post it, queue it for a moderator, or only record it.
Mode = Literal["dry-run", "review", "live"]


# The `[name]` section of the settings every adapter has; each adapter's own model (its
# `settings` module) adds what its platform needs. Secrets are `SecretStr` fields the bot's
# settings fill from the environment only.
class AdapterConfig(BaseModel):
    enabled: bool = False
    mode: Mode | None = None  # per-adapter override of the global mode
    poll_interval_s: float = 60.0
    bot_handle: str = "factnote"  # our own account, for loop prevention


@dataclass(frozen=True)
class VideoCaps:
    """The pipeline's video intake caps as an adapter needs them to choose a video's file
    (`VideoConfig.max_bytes`, `.max_seconds`): a file the pipeline would refuse is not chosen,
    and the attachment says why. None: no cap known."""

    max_bytes: int | None = None
    max_seconds: float | None = None


class MediaRef(BaseModel):
    url: str  # a fetchable URL (platform CDN) or a local path for the local adapter; "" if none
    alt_text: str | None = None
    kind: str = "photo"
    note: str | None = None  # what could not be read of it (no URL, an unknown embed type)
    # A video's own file (an MP4 URL, or an inbox path), when the platform gives one: the
    # pipeline reads it (keyframes, OCR). `url` stays the preview a person is shown.
    video_url: str | None = None


class SocialPost(BaseModel):
    """A post on a platform. Its text is untrusted data."""

    id: str
    author: str  # handle, without "@"
    author_id: str | None = None
    text: str
    created_at: datetime
    url: str | None = None  # permalink
    lang: str | None = None
    links: list[str] = Field(default_factory=list)
    media: list[MediaRef] = Field(default_factory=list)
    quoted: SocialPost | None = None  # the post this one quotes, when resolved
    author_is_bot: bool = False
    notes: list[str] = Field(default_factory=list)  # what was cut or could not be read


class TargetStatus(StrEnum):
    """Whether the post the bot was asked about could be read."""

    OK = "ok"
    SELF = "self"  # no parent or quoted post: the summons itself carries the claim
    MISSING = "missing"  # deleted or never existed
    WITHHELD = "withheld"  # withheld in a country / by the platform
    BLOCKED = "blocked"  # the author blocks us, or we them
    UNAVAILABLE = "unavailable"  # anything else that made it unreadable (detail in reason)


class Summons(BaseModel):
    """Someone asked the bot to look at a post (a mention, or a flagged post)."""

    platform: str
    id: str  # the summoning post's id; with platform, the idempotency key
    author: str
    author_id: str | None = None
    text: str
    created_at: datetime
    url: str | None = None
    # How the summons relates to the post being asked about.
    parent_id: str | None = None  # the post it replies to
    quoted_id: str | None = None  # the post it quotes
    # Platform data needed to reply correctly later (Bluesky: root/parent uri+cid), kept small.
    reply_context: dict[str, str] = Field(default_factory=dict)
    target: SocialPost | None = None
    target_status: TargetStatus = TargetStatus.SELF
    target_reason: str = ""  # detail when the target could not be read
    # The summons replies to one of the bot's own posts (loop prevention).
    replies_to_bot: bool = False
    author_is_bot: bool = False
    reply_allowed: bool = True  # False when a thread gate forbids our reply
    notes: list[str] = Field(default_factory=list)  # what was cut or could not be read


class FetchResult(BaseModel):
    summons: list[Summons]
    # The cursor to store once these summons are committed; None keeps the previous one.
    cursor: str | None = None


class ReplyReceipt(BaseModel):
    reply_id: str
    url: str | None = None
    posted_at: datetime


class RateBudget(BaseModel):
    endpoint: str
    limit: int | None = None
    remaining: int | None = None
    reset_at: datetime | None = None


class PlatformError(Exception):
    """A platform call failed. `retryable` says whether the same call may work later."""

    def __init__(self, message: str, *, retryable: bool, status: int | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status


class RateLimited(PlatformError):
    """The platform said wait. Schedule around `reset_at`; never sleep inside a job."""

    def __init__(self, message: str, *, reset_at: datetime | None) -> None:
        super().__init__(message, retryable=True, status=429)
        self.reset_at = reset_at


class DuplicateReply(PlatformError):
    """The platform refused the reply as a duplicate: ours is already there."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=False, status=403)


class ReplyForbidden(PlatformError):
    """We may not reply here (thread gate, blocked, protected account). Not retryable."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message, retryable=False, status=status)


class AccessDenied(PlatformError):
    """The account or app may not act at all (login refused, token without write permission,
    app outside a developer Project). Nothing is wrong with the request: it stays retryable,
    the adapter stops calling the platform until the process restarts with new settings, and
    an operator must act."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message, retryable=True, status=status)


@runtime_checkable
class Adapter(Protocol):
    """What the runtime needs from a platform."""

    name: str

    def fetch_summons(self, cursor: str | None) -> FetchResult:
        """New summons since `cursor` (oldest first), each with its target resolved."""
        ...

    def post_reply(self, summons: Summons, text: str, links: Sequence[str] = ()) -> ReplyReceipt:
        """Reply to the summoning post (never to its parent). Raises PlatformError.

        `links` are the URLs in `text`, as written, that the guard approved (`Decision.urls`).
        An adapter that makes links itself (Bluesky facets) links those and nothing else; one
        whose platform links text on its own (X) has no say in it.
        """
        ...

    def find_reply(self, summons: Summons) -> ReplyReceipt | None:
        """Our reply to this summons, if it exists (reconciliation after a crash)."""
        ...

    def recent_posts(
        self, user: str, *, limit: int = 50, since: datetime | None = None
    ) -> list[SocialPost]:
        """A user's recent posts, newest first (authority timelines)."""
        ...

    def budgets(self) -> list[RateBudget]:
        """What is left of the rate limits we have seen, for `factnote status`."""
        ...


def jsonable(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json")


def storable(text: str) -> str:
    """`text` as something a database can store: lone surrogates (a file name that is not
    UTF-8, a `\\ud800` escape in JSON, an emoji cut in half by a platform) become backslash
    escapes instead of failing the transaction they are written in."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def readable_text(text: object, notes: list[str], what: str = "text") -> str:
    """Platform text as something the bot can keep: a string (anything else is noted and
    read as empty), storable (lone surrogates escaped), at most `MAX_TEXT_CHARS` characters;
    each change is noted in `notes`."""
    if not isinstance(text, str):
        if text is not None:
            notes.append(f"{what} was not text ({type(text).__name__}); read as empty")
        return ""
    kept = storable(text)
    if kept != text:
        notes.append(f"{what} had characters that are not valid Unicode; kept as escapes")
    if len(kept) > MAX_TEXT_CHARS:
        notes.append(f"{what} cut to {MAX_TEXT_CHARS:,} of {len(kept):,} characters")
        kept = kept[:MAX_TEXT_CHARS]
    return kept


def unreadable_summons(
    platform: str, key: str, problem: str, *, created_at: datetime, author: str = ""
) -> Summons:
    """A summons the adapter could not read: recorded, and skipped by triage with the reason
    (its target is `unavailable`), so one bad item neither stops a poll nor is lost."""
    return Summons(
        platform=platform,
        id=storable(key)[:128],
        author=storable(author)[:256],
        text="",
        created_at=created_at,
        target_status=TargetStatus.UNAVAILABLE,
        target_reason=storable(f"unreadable summons: {problem}")[:500],
    )
