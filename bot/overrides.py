"""Settings an admin changed in the review app, stored in the database and applied over the
settings loaded from the config file and environment.

Only a short list of keys may be overridden (modes and decision thresholds); each has a parser
that validates the value, so a bad value is refused when it is set, and a stored value that no
longer validates is ignored with a warning instead of breaking the bot at start.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from bot import platforms
from bot.config import Settings
from storage.db import Database
from storage.models import SettingOverride

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
    keys = (Overridable("mode", "Global mode", _mode, MODES), *adapter_modes, *_THRESHOLDS)
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


def set_override(db: Database, key: str, raw: Any, actor: str) -> Any:
    """Validate and store an override; returns the parsed value."""
    value = parse_value(key, raw)
    with db.transaction() as session:
        row = session.get(SettingOverride, key) or SettingOverride(key=key)
        row.value = value
        row.updated_by = actor
        session.add(row)
    log.info("setting %s overridden by %s", key, actor)
    return value


def clear_override(db: Database, key: str) -> bool:
    with db.transaction() as session:
        row = session.get(SettingOverride, key)
        if row is None:
            return False
        session.delete(row)
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
    return merged
