"""The platforms the bot runs on, in one registry: one `AdapterSpec` per adapter.

A spec names the adapter (its platform name in requests, its `[name]` config section and its
config model), builds it from the settings (importing the platform's SDK only then), and says
whose reply format its replies follow (`pipeline.formats`) and which triage rules apply to its
requests. The runtime reads nothing else about a platform:

- `bot.service.build_adapters` builds every enabled adapter, `Bot.bot_handles` reads each
  section's `bot_handle`;
- `bot.web.dispatch` finds the section of a request's platform when a moderator approves it;
- `bot.convert.reply_platform` (worker, review, web) maps a request's platform to its format;
- `bot.triage.decide` reads the spec's `TriagePolicy`;
- `factnote run --mode`, the demo and the review app's overrides reach every section's `mode`.

Adding a platform: an adapter module in `adapters/` (the `adapters.base.Adapter` interface), its
config model (an `AdapterConfig`, its credentials `SecretStr` fields with their environment
names in `bot.config.FLAT_ENV`) as a field of `Settings` named like the platform, and one
`register(AdapterSpec(...))` below. A reply format with counting rules of its own is one
`pipeline.records.Platform` member and one `pipeline.formats.REPLY_FORMATS` entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING

from adapters.base import Adapter, AdapterConfig, Mode, Summons, VideoCaps
from adapters.bluesky.settings import BlueskyAdapterConfig
from adapters.local import LocalAdapterConfig
from adapters.x.settings import XAdapterConfig
from adapters.x_notes.settings import XNotesAdapterConfig
from bot.config import ConfigError, Settings, bluesky_credentials, x_credentials
from pipeline.records import Decision, Platform

if TYPE_CHECKING:
    from storage.db import Database


@dataclass(frozen=True)
class TriagePolicy:
    """Which of triage's rules about the people involved apply to a platform's requests. Both
    hold where people summon the bot by writing to it."""

    # "stop"/"start" (and the other opt-out words) in a summons opt its author out or in.
    commands: bool = True
    # `runtime.per_user_hourly` limits each requester (the overall limit always applies).
    per_user_limit: bool = True


@dataclass(frozen=True)
class AdapterSpec:
    name: str  # the platform name in requests and summons, and the config section's name
    label: str  # for people: "X", "Bluesky"
    config: type[AdapterConfig]  # the model of the `[name]` section of `Settings`
    build: Callable[[Settings], Adapter]  # the adapter, from settings; imports its SDK
    reply_format: Platform  # whose counting rules and writer's rules its replies follow
    triage: TriagePolicy = field(default_factory=TriagePolicy)
    # The platform's own gates on a decision, run by the worker before it is recorded.
    finish: Finish | None = None

    def section(self, settings: Settings) -> AdapterConfig:
        """This adapter's config section; a registered platform without one is a bug."""
        section = settings.adapter_section(self.name)
        if not isinstance(section, self.config):
            raise ConfigError(
                f"platform {self.name!r} is registered but the settings have no "
                f"[{self.name}] section of type {self.config.__name__}"
            )
        return section

    def bot_handle(self, settings: Settings) -> str:
        """Our own account on the platform, for loop prevention."""
        return self.section(settings).bot_handle


@dataclass(frozen=True)
class Finished:
    """A decision after a platform's own gates, and the mode it must take instead of the
    configured one (None: the configured one)."""

    decision: Decision
    mode: Mode | None = None


Finish = Callable[["Database", Settings, Adapter | None, Summons, Decision], Finished]


def finish_decision(
    db: Database, settings: Settings, adapter: Adapter | None, summons: Summons, decision: Decision
) -> Finished:
    """The decision after its platform's gates (unchanged on platforms without any)."""
    spec = spec_for(summons.platform)
    if spec is None or spec.finish is None:
        return Finished(decision)
    return spec.finish(db, settings, adapter, summons, decision)


_REGISTRY: dict[str, AdapterSpec] = {}


def register(spec: AdapterSpec) -> AdapterSpec:
    if spec.name in _REGISTRY:
        raise ValueError(f"platform {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


def specs() -> tuple[AdapterSpec, ...]:
    """Every registered adapter, in registration order (the order they are built and polled)."""
    return tuple(_REGISTRY.values())


def spec_for(platform: str) -> AdapterSpec | None:
    return _REGISTRY.get(platform)


def triage_policy(platform: str) -> TriagePolicy:
    spec = spec_for(platform)
    return spec.triage if spec is not None else TriagePolicy()


# --- The built-in adapters -------------------------------------------------------------------


def _local(settings: Settings) -> Adapter:
    from adapters.local import LocalAdapter

    local = settings.local
    return LocalAdapter(local.inbox, local.outbox, bot_handle=local.bot_handle)


def video_caps(settings: Settings) -> VideoCaps:
    """The pipeline's video intake caps, for the adapters that choose a video's file."""
    return VideoCaps(max_bytes=settings.video.max_bytes, max_seconds=settings.video.max_seconds)


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


# The local adapter has no counting rules of its own: its replies follow X's, the strictest.
register(AdapterSpec("local", "Local", LocalAdapterConfig, _local, Platform.X))
register(AdapterSpec("x", "X", XAdapterConfig, _x, Platform.X))
register(AdapterSpec("bluesky", "Bluesky", BlueskyAdapterConfig, _bluesky, Platform.BLUESKY))


def _x_notes(settings: Settings) -> Adapter:
    from bot.notes_wiring import build_notes_adapter

    return build_notes_adapter(settings)


def _x_notes_finish(
    db: Database, settings: Settings, adapter: Adapter | None, summons: Summons, decision: Decision
) -> Finished:
    from bot.notes import finish

    return finish(db, settings, adapter, summons, decision)


# Community Notes: posts X flags come in as summons; nobody summoned the bot, so no commands
# and no per-user limit.
register(
    AdapterSpec(
        "x_notes",
        "X Community Notes",
        XNotesAdapterConfig,
        _x_notes,
        Platform.NOTES,
        TriagePolicy(commands=False, per_user_limit=False),
        finish=_x_notes_finish,
    )
)
