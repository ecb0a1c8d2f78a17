"""Answers of the Community Notes API that mean something to the note writer.

The wording is matched loosely (lower-cased substrings of the error body): "User already
created a note for this post" (docs.x.com/x-api/community-notes/quickstart, common errors: one
note per post), "daily limit" (Goodheart-Labs/cn-return-bot writingLimit.ts learns the cap from
it), and 404 / "not eligible" for a post that left the feed.
"""

from __future__ import annotations

from datetime import datetime

from adapters.base import PlatformError

ALREADY_NOTED = ("already created a note",)
DAILY_LIMIT = ("daily limit", "daily note limit", "writing limit")
INELIGIBLE = ("not eligible", "ineligible")


class AlreadyNoted(PlatformError):
    """X says we already wrote a note on this post: the submission is done."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=False, status=400)


class DailyLimitReached(PlatformError):
    """X refused the note for the daily writing limit: keep it queued, learn the cap."""

    def __init__(self, message: str, reset_at: datetime | None = None) -> None:
        super().__init__(message, retryable=True, status=429)
        self.reset_at = reset_at


class NotEligible(PlatformError):
    """The post is gone or no longer takes notes: the note expires."""

    def __init__(self, message: str, status: int | None = 404) -> None:
        super().__init__(message, retryable=False, status=status)


def matches(text: str, markers: tuple[str, ...]) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in markers)
