"""After an approval: post through the request's adapter when this process has it enabled,
otherwise leave the request in `posting` for the running bot's maintenance job."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from adapters.base import AdapterConfig
from bot import overrides, platforms
from bot.config import Settings
from bot.ops.service import build_adapters
from bot.requests.posting import post_one
from storage.db import Database

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PostOutcome:
    posted: bool
    message: str


def _section(settings: Settings, platform: str) -> AdapterConfig | None:
    spec = platforms.spec_for(platform)
    return spec.section(settings) if spec is not None else None


def posts_here(settings: Settings, platform: str) -> bool:
    section = _section(settings, platform)
    return bool(section is not None and section.enabled)


def publishes(platform: str) -> bool:
    """Whether a reply approved for `platform` goes out in public (every platform but the
    local adapter, which writes to a file): approving one asks for a confirmation."""
    return platform != "local"


def approve_plan(settings: Settings, platform: str, db: Database | None = None) -> str:
    """What approving does, in words, for the item page (with `db`: what the kill switch
    does to it now)."""
    hold = overrides.posting_hold(db, platform) if db is not None else None
    if hold is not None:
        return (
            f"Posting is stopped by the kill switch ({hold}): approving moves the item to "
            "posting, and it is posted once the switch is lifted."
        )
    if posts_here(settings, platform):
        return f"Approving posts the reply now through the {platform} adapter."
    return (
        f"The {platform} adapter is not enabled in this app's settings: approving moves the "
        "item to posting, and the running bot's maintenance job posts it."
    )


def post_approved(settings: Settings, db: Database, request_id: int, platform: str) -> PostOutcome:
    if not posts_here(settings, platform):
        return PostOutcome(False, "left in posting: the running bot will post it")
    hold = overrides.posting_hold(db, platform)
    if hold is not None:
        return PostOutcome(False, f"held in posting by the kill switch: {hold}")
    # Build only this adapter: another platform's missing credentials must not stop it.
    only = settings.model_copy(deep=True)
    for spec in platforms.specs():
        spec.section(only).enabled = spec.name == platform
    try:
        adapter = build_adapters(only)[platform]
    except Exception as exc:  # credentials or session problems: the bot may still post it
        log.warning("request %s: could not start the %s adapter: %s", request_id, platform, exc)
        return PostOutcome(
            False, f"left in posting: could not start the {platform} adapter ({exc})"
        )
    if post_one(db, adapter, request_id, settings.runtime):
        return PostOutcome(True, "posted")
    return PostOutcome(False, "posting deferred or failed: see the item's state and last error")
