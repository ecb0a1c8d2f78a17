"""Times as Bluesky sends them: `indexedAt` (a server time, so a malformed one is a platform
error), a record's `createdAt` (client-set, possibly odd, so it falls back to `indexedAt`), and
the cursor's `indexedAt`."""

from __future__ import annotations

import re
from contextlib import suppress
from datetime import UTC, datetime

from adapters.base import PlatformError

_LONG_FRACTION = re.compile(r"(\.\d{6})\d+")


def now() -> datetime:
    return datetime.now(UTC)


def parse_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(_LONG_FRACTION.sub(r"\1", value.strip()))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def is_time(value: str) -> bool:
    try:
        parse_time(value)
    except ValueError:
        return False
    return True


def server_time(value: str) -> datetime:
    try:
        return parse_time(value)
    except ValueError as exc:
        raise PlatformError(
            f"Bluesky sent a malformed timestamp: {value!r}", retryable=False
        ) from exc


def parse_time_or(value: str | None, fallback: str) -> datetime:
    """A record's own (client-set, possibly odd) time, else the server's indexing time."""
    if value:
        with suppress(ValueError):
            return parse_time(value)
    return server_time(fallback)
