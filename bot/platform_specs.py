"""What a platform is to the bot (`AdapterSpec`) and the registry that holds them.

The types only: the built-in platforms are assembled by `bot.platforms.builtin_registry`, a
function, so that a platform's own code (Community Notes' `finish`, bot/notes/decision_to_note.py)
can name these types without importing the registry that imports it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from adapters.base import Adapter, AdapterConfig, Mode, Summons
from bot.config import ConfigError, Settings
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


class Registry:
    """The platforms of one process, in registration order (the order they are built and
    polled)."""

    def __init__(self, specs: tuple[AdapterSpec, ...] = ()) -> None:
        self._specs: dict[str, AdapterSpec] = {}
        for spec in specs:
            self.register(spec)

    def register(self, spec: AdapterSpec) -> AdapterSpec:
        if spec.name in self._specs:
            raise ValueError(f"platform {spec.name!r} is already registered")
        self._specs[spec.name] = spec
        return spec

    def unregister(self, name: str) -> None:
        self._specs.pop(name, None)

    def specs(self) -> tuple[AdapterSpec, ...]:
        return tuple(self._specs.values())

    def spec_for(self, platform: str) -> AdapterSpec | None:
        return self._specs.get(platform)
