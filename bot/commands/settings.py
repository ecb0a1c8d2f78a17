"""The loaded settings as the sub-commands see them."""

from __future__ import annotations

from typing import TypeVar

import typer

from bot.config import Settings, load_settings

T = TypeVar("T")


def section(ctx: typer.Context, name: str, kind: type[T]) -> T:
    """Section `name` of the settings the root command loaded into `ctx.obj`, or `kind`'s
    defaults when the command runs without them (mounted alone, as in tests)."""
    value = getattr(ctx.obj, name, None)
    return value if isinstance(value, kind) else kind()


def loaded(ctx: typer.Context) -> Settings:
    """The settings the root command loaded into `ctx.obj`, or the ones the environment (and
    FACTNOTE_CONFIG) give when the command runs without them (mounted alone, as in tests)."""
    return ctx.obj if isinstance(ctx.obj, Settings) else load_settings()
