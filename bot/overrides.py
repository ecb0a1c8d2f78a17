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
from typing import Any

from bot import platforms
from bot.config import Settings
from bot.ops import summary
from storage import overrides as saved
from storage.db import Database, Session
from storage.models import PostingPause, SettingChange, SettingOverride

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
        return saved.by_key(session)


def set_override(db: Database, key: str, raw: Any, actor: str) -> Any:
    """Validate and store an override; returns the parsed value."""
    value = parse_value(key, raw)
    with db.transaction() as session:
        old = saved.put(session, key, value, actor)
        saved.record_change(session, key, old, value, actor)
        if key == "mode" or key.endswith(".mode"):
            _release_held(session, None if key == "mode" else key.split(".", 1)[0])
    log.warning("setting %s set to %r by %s (was %r)", key, value, actor, old)
    return value


def clear_override(db: Database, key: str, actor: str = "") -> bool:
    with db.transaction() as session:
        found, old = saved.remove(session, key)
        if not found:
            return False
        saved.record_change(session, key, old, None, actor, note="back to the configured value")
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
        if not saved.add_pause(session, name, actor, note.strip()):
            return False
        saved.record_change(session, _pause_key(name), False, True, actor, note.strip())
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
        if not saved.remove_pause(session, name):
            return False
        saved.record_change(session, _pause_key(name), True, False, actor)
        _release_held(session, None if name == ALL_PLATFORMS else name)
    log.warning(
        "kill switch: posting to %s resumed by %s",
        "every platform" if name == ALL_PLATFORMS else name,
        actor,
    )
    return True


def _release_held(session: Session, platform: str | None) -> None:
    """Make the replies a switch held due now: the bot's next posting run checks them again."""
    saved.release_held(session, platform, HELD)


def pauses(db: Database) -> dict[str, PostingPause]:
    with db.session() as session:
        return saved.pauses(session)


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
    rows = saved.hold_rows(session, platform, ALL_PLATFORMS)
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


def live_mode(db: Database, settings: Settings, platform: str) -> str:
    """The mode `platform` is in now (`live_mode_in`)."""
    with db.session() as session:
        return live_mode_in(session, settings, platform)


def live_mode_in(session: Session, settings: Settings, platform: str) -> str:
    """The mode `platform` is in now: its mode override, else the global override, else what
    `settings` say. For a long-running process whose settings were read at its start; read in
    the caller's transaction (a worker's claim) rather than a session of its own."""
    rows = saved.mode_rows(session, platform)
    own, glob = rows.get(f"{platform}.mode"), rows.get("mode")
    return live_mode_from(
        settings, platform, own.value if own else None, glob.value if glob else None
    )


def live_mode_from(settings: Settings, platform: str, own: Any, glob: Any) -> str:
    """`live_mode_in`, from the stored values of the platform's own mode override and of the
    global one (None: not set), as a query of the caller read them
    (`storage.overrides.mode_overrides`)."""
    for key, raw in ((f"{platform}.mode", own), ("mode", glob)):
        value = parse_or_none(key, raw) if raw is not None else None
        if value is not None:
            return str(value)
    return settings.adapter_mode(platform)


def held_count(db: Database) -> dict[str, int]:
    """Replies waiting in `posting` on a platform the switch holds now, per platform: read
    from the posting state and the switch, so a pause counts its held replies at once, not
    only once the next posting pass has marked them."""
    with db.session() as session:
        return {
            platform: count
            for platform, count in saved.posting_by_platform(session)
            if posting_hold_in(session, platform) is not None
        }


def changes(db: Database, limit: int = 50) -> list[SettingChange]:
    """The latest changes to overrides and pauses, newest first."""
    with db.session() as session:
        return saved.latest_changes(session, limit)


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
