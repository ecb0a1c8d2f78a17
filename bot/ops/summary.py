"""Counting requests by outcome, for `factnote run --once`, `status` and the demo.

Requests from `factnote check` (platform `cli`, see `storage.repositories.create_cli_request`)
are kept apart everywhere the bot's traffic is counted: nobody summoned the bot for them and
nothing of theirs is posted, so counting them would make the bot look busier than it is."""

from __future__ import annotations

from datetime import datetime, timedelta

from pipeline.records import utcnow
from storage import requests
from storage.db import Database
from storage.models import Cursor
from storage.requests import Overview

__all__ = ["CLI_PLATFORM", "HELD", "Overview", "overview", "poll_failing", "posted_since"]

# How a held request's last_error starts (`bot.overrides.HELD`; spelt here, as the overrides
# module imports the settings and this one is read by every `status`).
HELD = "held: "

# The platform of the request rows `factnote check` writes (storage.repositories).
CLI_PLATFORM = "cli"


def poll_failing(cursor: Cursor) -> bool:
    """Whether the adapter's last poll failed (its error is not older than the poll)."""
    return (
        cursor.last_error_at is not None
        and cursor.last_poll_at is not None
        and cursor.last_error_at >= cursor.last_poll_at
    )


def posted_since(db: Database, since: datetime) -> int:
    """Replies that reached a platform since `since`, whoever posted them: a worker posts right
    after its decision and the maintenance step posts what is due, so neither's own count is
    the cycle's (counted from the request history, where every `posted` transition is a row)."""
    with db.session() as session:
        return requests.posted_since(session, since)


def overview(db: Database) -> Overview:
    with db.session() as session:
        return requests.overview(session, utcnow() - timedelta(hours=1), HELD, CLI_PLATFORM)
