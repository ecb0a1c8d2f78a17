"""Where the index commands (`claims`, `index`, `demo`) find their store: the main database,
migrated on opening, unless `--index` names a standalone one (a path or a database URL)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from bot.commands.output import fail
from bot.commands.settings import loaded

if TYPE_CHECKING:
    from storage.db import Engine

INDEX_HELP = "A standalone index (a SQLite path or a database URL) instead of the main database."


def is_url(target: str) -> bool:
    return "://" in target


def require_file(target: str | None, name: str, hint: str) -> None:
    """End a reading command when `target` names a standalone SQLite index that does not
    exist (reading it would create an empty one), saying so with `hint` on how to fill it; the
    main database, a URL and an existing file pass."""
    if target is None or is_url(target) or target == ":memory:":
        return
    path = Path(target)
    if not path.is_file():
        fail(f"no {name} at {path} ({hint})")


@contextmanager
def index_store(ctx: typer.Context, option: str | None) -> Iterator[str | Engine]:
    """What a pipeline store opens: `option` as given, else the main database's engine."""
    if option is not None:
        yield option
        return
    from storage.db import Database  # the migrations: only when a command runs

    settings = loaded(ctx)
    db = Database(settings.database_url, busy_timeout_s=settings.database_busy_timeout_s)
    try:
        yield db.engine
    finally:
        db.dispose()
