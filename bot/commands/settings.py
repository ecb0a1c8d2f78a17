"""The loaded settings as the sub-commands see them."""

from __future__ import annotations

from typing import TypeVar

import typer

T = TypeVar("T")


def section(ctx: typer.Context, name: str, kind: type[T]) -> T:
    """Section `name` of the settings the root command loaded into `ctx.obj`, or `kind`'s
    defaults when the command runs without them (mounted alone, as in tests)."""
    value = getattr(ctx.obj, name, None)
    return value if isinstance(value, kind) else kind()
