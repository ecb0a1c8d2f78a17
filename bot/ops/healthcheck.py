"""`python -m bot.ops.healthcheck`: the Docker image's HEALTHCHECK. Exit 0 healthy, 1 not.

The image runs either the review app (`factnote serve`), which answers `/healthz`, or the bot
(`factnote run`), which listens on nothing. So `/healthz` is asked first; when nothing listens
there the container is running the bot, which is healthy while its database answers and its
adapters have polled recently (`FACTNOTE_HEALTH_MAX_POLL_AGE_S`, one hour by default: the X
free plan polls every 15 minutes) and the last poll of each did not fail.
"""

from __future__ import annotations

import sys
import urllib.error
import urllib.request
from datetime import timedelta

from bot.config import ConfigError, load_settings
from bot.ops.summary import poll_failing
from pipeline.records import utcnow
from storage.db import Database
from storage.dialect import sqlite_file
from storage.requests import poll_cursors


def probe_web(url: str, timeout_s: float = 5.0) -> bool | None:
    """True/False: the review app answered healthy or not; None: nothing listens there."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:  # noqa: S310 (ours)
            return bool(response.status == 200)
    except urllib.error.HTTPError:
        return False  # it answered, unhealthy (503: the database did not)
    except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
        reason = getattr(exc, "reason", exc)
        return None if isinstance(reason, ConnectionRefusedError) else False


def bot_problem(database_url: str, max_poll_age_s: float) -> str | None:
    """Why the bot is unhealthy, or None."""
    file = sqlite_file(database_url)
    if file is not None and not file.is_file():
        return f"database: no file at {file}"  # and the probe must not create one
    db = Database(database_url, migrate=False)
    try:
        with db.session() as session:
            cursors = poll_cursors(session)
    except Exception as exc:  # any failure to read is the answer, not a crash of the probe
        return f"database: {type(exc).__name__}"
    finally:
        db.dispose()
    if not cursors:
        return "no adapter has polled yet"
    newest = max((c.last_poll_at for c in cursors if c.last_poll_at), default=None)
    if newest is None or utcnow() - newest > timedelta(seconds=max_poll_age_s):
        return f"no poll in the last {max_poll_age_s:g} s"
    failing = [c.adapter for c in cursors if poll_failing(c)]
    return f"last poll failed: {', '.join(failing)}" if failing else None


def main() -> int:
    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"factnote: {exc}")
        return 1
    web = probe_web(settings.health.url)
    if web is not None:
        print("review app: " + ("ok" if web else "unhealthy"))
        return 0 if web else 1
    problem = bot_problem(settings.database_url, settings.health.max_poll_age_s)
    print("bot: " + (problem or "ok"))
    return 1 if problem else 0


if __name__ == "__main__":
    sys.exit(main())
