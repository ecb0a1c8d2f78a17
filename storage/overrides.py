"""Queries behind the settings an admin overrides in the review app and the posting kill
switch: the rows `bot.overrides` reads and writes. The bot keeps the rules (which keys, how a
value parses, what a hold means) and writes no SQL of its own."""

from __future__ import annotations

from functools import cache
from typing import Any

from sqlalchemy import (
    CompoundSelect,
    Row,
    ScalarSelect,
    cast,
    false,
    func,
    null,
    select,
    true,
    union_all,
    update,
)
from sqlalchemy.orm import Session

from storage.models import PostingPause, Request, RequestState, SettingChange, SettingOverride


def by_key(session: Session) -> dict[str, SettingOverride]:
    """Every stored override, by key."""
    return {row.key: row for row in session.scalars(select(SettingOverride))}


def put(session: Session, key: str, value: Any, actor: str) -> Any:
    """Store an override's value; returns the value it had (None: not set)."""
    row = session.get(SettingOverride, key)
    old = row.value if row is not None else None
    row = row or SettingOverride(key=key)
    row.value = value
    row.updated_by = actor
    session.add(row)
    return old


def remove(session: Session, key: str) -> tuple[bool, Any]:
    """Delete an override: whether there was one, and its value."""
    row = session.get(SettingOverride, key)
    if row is None:
        return False, None
    session.delete(row)
    return True, row.value


def record_change(
    session: Session, key: str, old: Any, new: Any, actor: str, note: str = ""
) -> None:
    session.add(SettingChange(key=key, old_value=old, new_value=new, actor=actor or "?", note=note))


def pauses(session: Session) -> dict[str, PostingPause]:
    """Every pause, by platform name."""
    return {row.platform: row for row in session.scalars(select(PostingPause))}


def add_pause(session: Session, platform: str, actor: str, note: str) -> bool:
    """Pause `platform`; False when it already was."""
    if session.get(PostingPause, platform) is not None:
        return False
    session.add(PostingPause(platform=platform, paused_by=actor, note=note))
    return True


def remove_pause(session: Session, platform: str) -> bool:
    """Lift the pause of `platform`; False when it was not paused."""
    row = session.get(PostingPause, platform)
    if row is None:
        return False
    session.delete(row)
    return True


def release_held(session: Session, platform: str | None, held: str) -> None:
    """Make the replies in `posting` whose last error starts with `held` due now (of
    `platform`, or of every platform): the bot's next posting run checks them again."""
    stmt = update(Request).where(
        Request.state == RequestState.POSTING.value, Request.last_error.like(f"{held}%")
    )
    if platform is not None:
        stmt = stmt.where(Request.platform == platform)
    session.execute(stmt.values(next_attempt_at=None).execution_options(synchronize_session=False))


def hold_rows(session: Session, platform: str, every: str) -> list[Row[Any]]:
    """The pauses of `platform` and of every platform (named `every`), and its mode overrides
    (its own, the global one), as rows of one shape: pause, key, who, note, at, value."""
    return list(session.execute(_hold_query(platform, every)).all())


@cache  # a few platforms; building the statement cost more CPU than running it (issue 12)
def _hold_query(platform: str, every: str) -> CompoundSelect:
    pauses = select(
        true().label("pause"),
        PostingPause.platform.label("key"),
        PostingPause.paused_by.label("who"),
        PostingPause.note.label("note"),
        PostingPause.paused_at.label("at"),
        cast(null(), SettingOverride.value.type).label("value"),
    ).where(PostingPause.platform.in_((platform, every)))
    modes = select(
        false(),
        SettingOverride.key,
        SettingOverride.updated_by,
        cast(null(), PostingPause.note.type),
        cast(null(), PostingPause.paused_at.type),
        SettingOverride.value,
    ).where(SettingOverride.key.in_(("mode", f"{platform}.mode")))
    return union_all(pauses, modes)


def mode_rows(session: Session, platform: str) -> dict[str, Any]:
    """The stored mode overrides that apply to `platform` (its own, the global one), by key:
    rows of key, value and who set it (a Core select, no ORM objects to build)."""
    found = session.execute(
        select(SettingOverride.key, SettingOverride.value, SettingOverride.updated_by).where(
            SettingOverride.key.in_(("mode", f"{platform}.mode"))
        )
    ).all()
    return {row.key: row for row in found}


def mode_overrides() -> tuple[ScalarSelect[Any], ScalarSelect[Any]]:
    """The stored mode overrides of a request's platform (correlated with `Request.platform`)
    and the global one, as columns a query of requests can read along (the PostgreSQL claim:
    one query fewer per request, issue 12)."""
    own = select(SettingOverride.value).where(SettingOverride.key == Request.platform + ".mode")
    glob = select(SettingOverride.value).where(SettingOverride.key == "mode")
    return own.scalar_subquery(), glob.scalar_subquery()


def posting_by_platform(session: Session) -> list[tuple[str, int]]:
    """How many requests wait in `posting`, per platform."""
    rows = session.execute(
        select(Request.platform, func.count())
        .where(Request.state == RequestState.POSTING.value)
        .group_by(Request.platform)
    ).all()
    return [(platform, int(count)) for platform, count in rows]


def latest_changes(session: Session, limit: int) -> list[SettingChange]:
    """The latest changes to overrides and pauses, newest first."""
    return list(
        session.scalars(
            select(SettingChange)
            .order_by(SettingChange.created_at.desc(), SettingChange.id.desc())
            .limit(limit)
        )
    )
