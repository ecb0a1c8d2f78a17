"""The kill switch as the poster reads it (`overrides.posting_hold_in`): pauses and mode
overrides in one query, on both databases the bot runs on (issue 12)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import event

from bot import overrides
from storage.db import Database


@contextmanager
def _statements(db: Database) -> Iterator[list[str]]:
    seen: list[str] = []

    def note(*args: object) -> None:
        seen.append(str(args[2]))

    event.listen(db.engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        event.remove(db.engine, "before_cursor_execute", note)


def _hold(db: Database, platform: str = "x") -> str | None:
    with db.session() as session:
        return overrides.posting_hold_in(session, platform)


def test_nothing_set_holds_nothing_in_one_query(main_db: Database) -> None:
    with _statements(main_db) as seen:
        assert _hold(main_db) is None
    assert len(seen) == 1


def test_a_pause_of_every_platform_is_named_before_the_platforms_own(main_db: Database) -> None:
    overrides.pause(main_db, "x", "mod_a", "own")
    overrides.pause(main_db, "*", "mod_b", "all")
    held = _hold(main_db)
    assert held is not None and held.startswith("posting to every platform paused by mod_b")
    assert held.endswith("UTC: all")


def test_a_pause_of_another_platform_does_not_hold(main_db: Database) -> None:
    overrides.pause(main_db, "bluesky", "mod_a")
    assert _hold(main_db, "x") is None
    assert (_hold(main_db, "bluesky") or "").startswith("posting to bluesky paused by mod_a at ")


def test_the_platforms_own_mode_wins_over_the_global_one(main_db: Database) -> None:
    overrides.set_override(main_db, "mode", "dry-run", "admin_g")
    assert _hold(main_db) == "mode is dry-run (set by admin_g)"
    overrides.set_override(main_db, "x.mode", "live", "admin_x")
    assert _hold(main_db) is None
    overrides.set_override(main_db, "x.mode", "dry-run", "admin_x")
    assert _hold(main_db) == "x.mode is dry-run (set by admin_x)"


def test_a_pause_is_reported_before_a_dry_run_mode(main_db: Database) -> None:
    overrides.set_override(main_db, "x.mode", "dry-run", "admin_x")
    overrides.pause(main_db, "x", "mod_a")
    assert (_hold(main_db) or "").startswith("posting to x paused by mod_a")
