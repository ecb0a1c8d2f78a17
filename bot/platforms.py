"""The platforms the bot runs on, in one registry: one `AdapterSpec` per adapter.

A spec names the adapter (its platform name in requests, its `[name]` config section and its
config model), builds it from the settings (importing the platform's SDK only then), and says
whose reply format its replies follow (`pipeline.reply.formats`) and which triage rules apply to its
requests. The runtime reads nothing else about a platform:

- `bot.ops.service.build_adapters` builds every enabled adapter, `Bot.bot_handles` reads each
  section's `bot_handle`;
- `bot.web.dispatch` finds the section of a request's platform when a moderator approves it;
- `bot.requests.to_pipeline.reply_platform` (worker, review, web) maps a request's platform to its
  format;
- `bot.requests.triage.decide` reads the spec's `TriagePolicy`;
- `factnote run --mode`, the demo and the review app's overrides reach every section's `mode`.

Adding a platform: an adapter module in `adapters/` (the `adapters.base.Adapter` interface), its
config model (an `AdapterConfig`, its credentials `SecretStr` fields with their environment
names in `bot.config.FLAT_ENV`) as a field of `Settings` named like the platform, and one
`AdapterSpec(...)` in `builtin_registry` below.

Nothing is registered at import: the process's registry is built at start-up by the one that
starts it — `install()` in the CLI's root command (`bot.cli`), the benchmarks' entry and the
test session (tests/conftest.py) — and `registry()` before that is an error, not a silent
build. The spec types live in `bot.platform_specs`, which a platform's own gates
(bot/notes/decision_to_note.py) import without importing this module back. A reply format with
counting rules of its own is one `pipeline.records.Platform` member and one
`pipeline.reply.formats.REPLY_FORMATS` entry.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from adapters.base import Adapter, Summons
from adapters.bluesky.settings import BlueskyAdapterConfig
from adapters.local import LocalAdapterConfig
from adapters.x.settings import XAdapterConfig
from adapters.x_notes.settings import XNotesAdapterConfig
from bot.config import Settings, bluesky_credentials, video_caps, x_credentials
from bot.platform_specs import AdapterSpec, Finish, Finished, Registry, TriagePolicy
from pipeline.records import Decision, Platform

if TYPE_CHECKING:
    from storage.db import Database

__all__ = [
    "AdapterSpec",
    "Finish",
    "Finished",
    "PlatformsNotInstalled",
    "Registry",
    "TriagePolicy",
    "builtin_registry",
    "finish_decision",
    "install",
    "installed",
    "register",
    "registry",
    "spec_for",
    "specs",
    "triage_policy",
    "unregister",
]


def builtin_registry() -> Registry:
    """A new registry of the platforms built in."""
    return Registry(
        (
            # The local adapter has no counting rules of its own: its replies follow X's,
            # the strictest.
            AdapterSpec("local", "Local", LocalAdapterConfig, _local, Platform.X),
            AdapterSpec("x", "X", XAdapterConfig, _x, Platform.X),
            AdapterSpec("bluesky", "Bluesky", BlueskyAdapterConfig, _bluesky, Platform.BLUESKY),
            # Community Notes: posts X flags come in as summons; nobody summoned the bot, so
            # no commands and no per-user limit.
            AdapterSpec(
                "x_notes",
                "X Community Notes",
                XNotesAdapterConfig,
                _x_notes,
                Platform.NOTES,
                TriagePolicy(commands=False, per_user_limit=False),
                finish=_x_notes_finish,
            ),
        )
    )


class PlatformsNotInstalled(RuntimeError):
    """A platform was looked up before the process built its registry (`install`)."""


_installed: list[Registry] = []  # this process's registry, once `install` has run


def install(platforms: Registry | None = None) -> Registry:
    """Make `platforms` (by default the built-in ones) this process's registry, replacing any
    installed before; a plugin or a test then registers its own platform on it."""
    chosen = platforms if platforms is not None else builtin_registry()
    _installed[:] = [chosen]
    return chosen


def installed() -> Registry | None:
    """The registry `install` made this process's, or None before start-up."""
    return _installed[0] if _installed else None


def registry() -> Registry:
    """This process's platforms, as installed at start-up."""
    if not _installed:
        raise PlatformsNotInstalled(
            "no platform registry: the process's entry point calls bot.platforms.install() first"
        )
    return _installed[0]


def register(spec: AdapterSpec) -> AdapterSpec:
    return registry().register(spec)


def unregister(name: str) -> None:
    registry().unregister(name)


def specs() -> tuple[AdapterSpec, ...]:
    """Every registered adapter, in registration order (the order they are built and polled)."""
    return registry().specs()


def spec_for(platform: str) -> AdapterSpec | None:
    return registry().spec_for(platform)


def triage_policy(platform: str) -> TriagePolicy:
    spec = spec_for(platform)
    return spec.triage if spec is not None else TriagePolicy()


def finish_decision(
    db: Database, settings: Settings, adapter: Adapter | None, summons: Summons, decision: Decision
) -> Finished:
    """The decision after its platform's gates (unchanged on platforms without any)."""
    spec = spec_for(summons.platform)
    if spec is None or spec.finish is None:
        return Finished(decision)
    return spec.finish(db, settings, adapter, summons, decision)


# --- The built-in adapters -------------------------------------------------------------------


def _local(settings: Settings) -> Adapter:
    from adapters.local import LocalAdapter

    local = settings.local
    return LocalAdapter(local.inbox, local.outbox, bot_handle=local.bot_handle)


def _x(settings: Settings) -> Adapter:
    from adapters.x.adapter import XAdapter

    return XAdapter(
        x_credentials(settings.x),
        known_bots=settings.runtime.known_bots,
        max_reply_refusals=settings.x.max_reply_refusals,
        video_caps=video_caps(settings),
    )


def _bluesky(settings: Settings) -> Adapter:
    from adapters.bluesky.adapter import BlueskyAdapter

    return BlueskyAdapter(
        bluesky_credentials(settings.bluesky),
        session_path=settings.bluesky.session_path,
        known_bots=settings.runtime.known_bots,
        overlap=timedelta(seconds=settings.bluesky.notification_overlap_s),
        video_caps=video_caps(settings) if settings.video.enabled else None,
        plc_url=settings.bluesky.plc_url,
    )


def _x_notes(settings: Settings) -> Adapter:
    from bot.notes.adapter_setup import build_notes_adapter

    return build_notes_adapter(settings)


def _x_notes_finish(
    db: Database, settings: Settings, adapter: Adapter | None, summons: Summons, decision: Decision
) -> Finished:
    from bot.notes.decision_to_note import finish

    return finish(db, settings, adapter, summons, decision)
