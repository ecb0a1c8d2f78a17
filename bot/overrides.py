"""Settings an admin changed in the review app, stored in the database and applied over the
settings loaded from the config file and environment, and the posting kill switch.

Only a short list of keys may be overridden (modes and decision thresholds); each has a parser
that validates the value, so a bad value is refused when it is set, and a stored value that no
longer validates is ignored with a warning instead of breaking the bot at start. An overridden
global mode applies to every adapter that has no mode override of its own (a mode an adapter's
config section sets gives way to it: the admin's switch wins over the file).

The kill switch (`posting_hold`) is read from the database right before every platform call
(in the transaction that commits the posting attempt, the last step before the call), so a
running bot obeys it within one post, without a restart: posting to a platform stops while
it is paused (`pause`, per platform or for all) or while its mode is overridden to dry-run.
Replies ready to post wait in `posting` until the switch is lifted. Every change to an override
or a pause is logged and stored with who made it (`SettingChange`, `changes`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import (
    CompoundSelect,
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

from bot import platforms, summary
from bot.config import Settings
from storage.db import Database
from storage.models import PostingPause, Request, RequestState, SettingChange, SettingOverride

log = logging.getLogger(__name__)

MODES = ("dry-run", "review", "live")


class OverrideError(ValueError):
    """A refused override: unknown key or invalid value."""


def _mode(raw: Any) -> str:
    value = str(raw).strip()
    if value not in MODES:
        raise OverrideError(f"mode must be one of: {', '.join(MODES)}")
    return value


def _adapter_mode(raw: Any) -> str | None:
    """A per-adapter mode; empty means "follow the global mode"."""
    value = "" if raw is None else str(raw).strip()
    return _mode(value) if value else None


def _fraction(raw: Any) -> float:
    try:
        value = float(raw)
    except (TypeError, ValueError) as exc:
        raise OverrideError("expected a number between 0 and 1") from exc
    if not 0.0 <= value <= 1.0:
        raise OverrideError("expected a number between 0 and 1")
    return value


def _positive_hours(raw: Any) -> float:
    try:
        value = float(raw)
    except (TypeError, ValueError) as exc:
        raise OverrideError("expected a number of hours") from exc
    if not 0.0 < value <= 24 * 30:
        raise OverrideError("expected hours between 0 and 720")
    return value


def _sources(raw: Any) -> int:
    try:
        value = int(str(raw).strip())
    except ValueError as exc:
        raise OverrideError("expected a whole number") from exc
    if not 1 <= value <= 10:
        raise OverrideError("expected a whole number between 1 and 10")
    return value


@dataclass(frozen=True)
class Overridable:
    key: str  # dotted path into Settings: "mode", "guard.min_confidence", ...
    label: str
    parse: Callable[[Any], Any]
    choices: tuple[str, ...] = ()  # for a select box; empty for free input


_THRESHOLDS = (
    Overridable("guard.min_confidence", "Guard: minimum verdict confidence", _fraction),
    Overridable("guard.min_independent_sources", "Guard: minimum independent sources", _sources),
    Overridable("research.vote_threshold", "Research: signed-vote threshold", _fraction),
    Overridable("research.decide_confidence", "Research: round decided above", _fraction),
    Overridable("runtime.review_ttl_h", "Review deadline (hours)", _positive_hours),
)


def overridable() -> dict[str, Overridable]:
    """The keys that may be overridden: the global mode, each registered adapter's mode
    (`bot.platforms`), then the thresholds."""
    adapter_modes = (
        Overridable(
            f"{p.name}.mode", f"{p.label} adapter mode (empty: global)", _adapter_mode, MODES
        )
        for p in platforms.specs()
    )
    glob = Overridable("mode", "Global mode (adapters without a mode of their own)", _mode, MODES)
    keys = (glob, *adapter_modes, *_THRESHOLDS)
    return {o.key: o for o in keys}


def parse_value(key: str, raw: Any) -> Any:
    spec = overridable().get(key)
    if spec is None:
        raise OverrideError(f"{key!r} cannot be changed here")
    return spec.parse(raw)


def current_value(settings: Settings, key: str) -> Any:
    target: Any = settings
    for part in key.split("."):
        target = getattr(target, part)
    return target


def _assign(settings: Settings, key: str, value: Any) -> None:
    *path, name = key.split(".")
    target: Any = settings
    for part in path:
        target = getattr(target, part)
    setattr(target, name, value)


def stored_overrides(db: Database) -> dict[str, SettingOverride]:
    with db.session() as session:
        return {row.key: row for row in session.scalars(select(SettingOverride))}


def _record_change(session: Any, key: str, old: Any, new: Any, actor: str, note: str = "") -> None:
    session.add(SettingChange(key=key, old_value=old, new_value=new, actor=actor or "?", note=note))


def set_override(db: Database, key: str, raw: Any, actor: str) -> Any:
    """Validate and store an override; returns the parsed value."""
    value = parse_value(key, raw)
    with db.transaction() as session:
        row = session.get(SettingOverride, key)
        old = row.value if row is not None else None
        row = row or SettingOverride(key=key)
        row.value = value
        row.updated_by = actor
        session.add(row)
        _record_change(session, key, old, value, actor)
        if key == "mode" or key.endswith(".mode"):
            _release_held(session, None if key == "mode" else key.split(".", 1)[0])
    log.warning("setting %s set to %r by %s (was %r)", key, value, actor, old)
    return value


def clear_override(db: Database, key: str, actor: str = "") -> bool:
    with db.transaction() as session:
        row = session.get(SettingOverride, key)
        if row is None:
            return False
        _record_change(session, key, row.value, None, actor, note="back to the configured value")
        session.delete(row)
        if key == "mode" or key.endswith(".mode"):
            _release_held(session, None if key == "mode" else key.split(".", 1)[0])
    log.warning("setting %s back to the configured value by %s", key, actor or "?")
    return True


def apply_overrides(settings: Settings, db: Database) -> Settings:
    """A copy of `settings` with the stored overrides applied; `settings` is not changed."""
    rows = stored_overrides(db)
    if not rows:
        return settings
    merged = settings.model_copy(deep=True)
    for key, row in rows.items():
        try:
            _assign(merged, key, parse_value(key, row.value))
        except OverrideError as exc:
            log.warning("ignoring stored setting %s=%r: %s", key, row.value, exc)
    if "mode" in rows and merged.mode == parse_or_none("mode", rows["mode"].value):
        # The admin's global mode reaches every adapter without a mode override of its own.
        for spec in platforms.specs():
            own = rows.get(f"{spec.name}.mode")
            if own is None or parse_or_none(f"{spec.name}.mode", own.value) is None:
                spec.section(merged).mode = None
    return merged


def parse_or_none(key: str, raw: Any) -> Any:
    try:
        return parse_value(key, raw)
    except OverrideError:
        return None


# --- The kill switch -----------------------------------------------------------------------

ALL_PLATFORMS = "*"
HELD = summary.HELD  # how a held request's last_error starts


def _pause_key(platform: str) -> str:
    return f"pause.{platform}"


def _known_platform(platform: str) -> str:
    value = platform.strip()
    names = [p.name for p in platforms.specs()]
    if value != ALL_PLATFORMS and value not in names:
        raise OverrideError(f"platform must be one of: {', '.join([*names, ALL_PLATFORMS])}")
    return value


def pause(db: Database, platform: str, actor: str, note: str = "") -> bool:
    """Stop posting to `platform` ("*": to every platform). False when it already was."""
    name = _known_platform(platform)
    with db.transaction() as session:
        if session.get(PostingPause, name) is not None:
            return False
        session.add(PostingPause(platform=name, paused_by=actor, note=note.strip()))
        _record_change(session, _pause_key(name), False, True, actor, note.strip())
    log.warning(
        "kill switch: posting to %s paused by %s%s",
        "every platform" if name == ALL_PLATFORMS else name,
        actor,
        f" ({note.strip()})" if note.strip() else "",
    )
    return True


def resume(db: Database, platform: str, actor: str) -> bool:
    """Lift a pause; the replies it held are due at once. False when it was not paused."""
    name = _known_platform(platform)
    with db.transaction() as session:
        row = session.get(PostingPause, name)
        if row is None:
            return False
        session.delete(row)
        _record_change(session, _pause_key(name), True, False, actor)
        _release_held(session, None if name == ALL_PLATFORMS else name)
    log.warning(
        "kill switch: posting to %s resumed by %s",
        "every platform" if name == ALL_PLATFORMS else name,
        actor,
    )
    return True


def _release_held(session: Any, platform: str | None) -> None:
    """Make the replies a switch held due now: the bot's next posting run checks them again."""
    stmt = update(Request).where(
        Request.state == RequestState.POSTING.value, Request.last_error.like(f"{HELD}%")
    )
    if platform is not None:
        stmt = stmt.where(Request.platform == platform)
    session.execute(stmt.values(next_attempt_at=None).execution_options(synchronize_session=False))


def pauses(db: Database) -> dict[str, PostingPause]:
    with db.session() as session:
        return {row.platform: row for row in session.scalars(select(PostingPause))}


def posting_hold(db: Database, platform: str) -> str | None:
    """Why nothing may be posted to `platform` right now, or None (`posting_hold_in`)."""
    with db.session() as session:
        return posting_hold_in(session, platform)


def posting_hold_in(session: Session, platform: str) -> str | None:
    """Why nothing may be posted to `platform` right now, or None: a pause of it or of every
    platform, or a mode overridden to dry-run (its own, else the global one). Read in the
    caller's transaction: the poster's, which commits its attempt right before the platform
    call, so the switch costs no session of its own, and in one query (pauses and mode
    overrides together: it runs once per post, issue 12)."""
    rows = session.execute(_hold_query(platform)).all()
    pauses = sorted((row for row in rows if row.pause), key=lambda row: row.key)
    if pauses:  # by name, as ever: a pause of every platform ("*") is the one named
        paused = pauses[0]
        scope = "every platform" if paused.key == ALL_PLATFORMS else platform
        note = f": {paused.note}" if paused.note else ""
        return f"posting to {scope} paused by {paused.who} at {paused.at:%Y-%m-%d %H:%M} UTC{note}"
    modes = {row.key: row for row in rows if not row.pause}
    own = modes.get(f"{platform}.mode")
    chosen = own if own is not None and parse_or_none(own.key, own.value) else modes.get("mode")
    if chosen is not None and parse_or_none(chosen.key, chosen.value) == "dry-run":
        return f"{chosen.key} is dry-run (set by {chosen.who or '?'})"
    return None


@cache  # a few platforms; building the statement cost more CPU than running it (issue 12)
def _hold_query(platform: str) -> CompoundSelect:
    """The pauses of `platform` and of every platform, and its mode overrides (its own, the
    global one), as rows of one shape: pause, key, who, note, at, value."""
    pauses = select(
        true().label("pause"),
        PostingPause.platform.label("key"),
        PostingPause.paused_by.label("who"),
        PostingPause.note.label("note"),
        PostingPause.paused_at.label("at"),
        cast(null(), SettingOverride.value.type).label("value"),
    ).where(PostingPause.platform.in_((platform, ALL_PLATFORMS)))
    modes = select(
        false(),
        SettingOverride.key,
        SettingOverride.updated_by,
        cast(null(), PostingPause.note.type),
        cast(null(), PostingPause.paused_at.type),
        SettingOverride.value,
    ).where(SettingOverride.key.in_(("mode", f"{platform}.mode")))
    return union_all(pauses, modes)


def _mode_rows(session: Session, platform: str) -> dict[str, Any]:
    """The stored mode overrides that apply to `platform` (its own, the global one), by key:
    rows of key, value and who set it (a Core select, no ORM objects to build)."""
    found = session.execute(
        select(SettingOverride.key, SettingOverride.value, SettingOverride.updated_by).where(
            SettingOverride.key.in_(("mode", f"{platform}.mode"))
        )
    ).all()
    return {row.key: row for row in found}


def live_mode(db: Database, settings: Settings, platform: str) -> str:
    """The mode `platform` is in now (`live_mode_in`)."""
    with db.session() as session:
        return live_mode_in(session, settings, platform)


def live_mode_in(session: Session, settings: Settings, platform: str) -> str:
    """The mode `platform` is in now: its mode override, else the global override, else what
    `settings` say. For a long-running process whose settings were read at its start; read in
    the caller's transaction (a worker's claim) rather than a session of its own."""
    rows = _mode_rows(session, platform)
    own, glob = rows.get(f"{platform}.mode"), rows.get("mode")
    return live_mode_from(
        settings, platform, own.value if own else None, glob.value if glob else None
    )


def live_mode_from(settings: Settings, platform: str, own: Any, glob: Any) -> str:
    """`live_mode_in`, from the stored values of the platform's own mode override and of the
    global one (None: not set), as a query of the caller read them (`mode_overrides`)."""
    for key, raw in ((f"{platform}.mode", own), ("mode", glob)):
        value = parse_or_none(key, raw) if raw is not None else None
        if value is not None:
            return str(value)
    return settings.adapter_mode(platform)


def mode_overrides() -> tuple[ScalarSelect[Any], ScalarSelect[Any]]:
    """The stored mode overrides of a request's platform (correlated with `Request.platform`)
    and the global one, as columns a query of requests can read along (the PostgreSQL claim:
    one query fewer per request, issue 12); `live_mode_from` makes them a mode."""
    own = select(SettingOverride.value).where(SettingOverride.key == Request.platform + ".mode")
    glob = select(SettingOverride.value).where(SettingOverride.key == "mode")
    return own.scalar_subquery(), glob.scalar_subquery()


def held_count(db: Database) -> dict[str, int]:
    """Replies waiting in `posting` on a platform the switch holds now, per platform: read
    from the posting state and the switch, so a pause counts its held replies at once, not
    only once the next posting pass has marked them."""
    with db.session() as session:
        rows = session.execute(
            select(Request.platform, func.count())
            .where(Request.state == RequestState.POSTING.value)
            .group_by(Request.platform)
        ).all()
        return {
            platform: int(count)
            for platform, count in rows
            if posting_hold_in(session, platform) is not None
        }


def changes(db: Database, limit: int = 50) -> list[SettingChange]:
    """The latest changes to overrides and pauses, newest first."""
    with db.session() as session:
        return list(
            session.scalars(
                select(SettingChange)
                .order_by(SettingChange.created_at.desc(), SettingChange.id.desc())
                .limit(limit)
            )
        )


def switch_summary(db: Database) -> list[str]:
    """One line per thing the kill switch stops now: pauses, and modes overridden to dry-run."""
    lines = []
    for name, pause_row in sorted(pauses(db).items()):
        scope = "every platform" if name == ALL_PLATFORMS else name
        note = f" ({pause_row.note})" if pause_row.note else ""
        lines.append(f"Posting to {scope} is paused by {pause_row.paused_by}{note}.")
    for key, row in sorted(stored_overrides(db).items()):
        if (key == "mode" or key.endswith(".mode")) and row.value == "dry-run":
            who = row.updated_by or "?"
            if key == "mode":
                lines.append(
                    f"Dry-run (global mode, set by {who}): nothing is posted to a platform "
                    "without a mode of its own."
                )
            else:
                platform = key.split(".", 1)[0]
                lines.append(f"Dry-run for {platform} (set by {who}): nothing is posted there.")
    return lines
