"""Progress bars for long commands (`index add`, `claims import`, `eval`, `report`).

Drawn on stderr with the count, elapsed time and an estimate of the time left; nothing at all
with the global `--quiet`, or when stderr is not a terminal (a pipe, a log file, cron, tests),
so output that is read by programs stays exactly the same.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

T = TypeVar("T")
QUIET_KEY = "factnote.quiet"  # in click's `ctx.meta`, shared by every command of one run


def set_quiet(ctx: typer.Context, quiet: bool) -> None:
    ctx.meta[QUIET_KEY] = quiet


def is_quiet(ctx: typer.Context | None) -> bool:
    return bool(ctx is not None and ctx.meta.get(QUIET_KEY))


def shown(ctx: typer.Context | None) -> bool:
    """Whether bars are drawn: not --quiet, and stderr is a terminal."""
    return not is_quiet(ctx) and sys.stderr.isatty()


class Bar:
    """One task of a `Bars`; a no-op when bars are not shown."""

    def __init__(self, progress: Progress | None, task: TaskID | None) -> None:
        self._progress = progress
        self._task = task

    def advance(self, steps: float = 1) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task, steps)

    def track(self, items: Iterable[T]) -> Iterator[T]:
        """`items`, each counted once the loop body is done with it (`continue` included)."""
        for item in items:
            yield item
            self.advance()

    def update(self, **fields: Any) -> None:
        """`total=`, `completed=`, `description=`, as rich's `Progress.update` takes them."""
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, **fields)

    def done(self) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.remove_task(self._task)


class Bars:
    def __init__(self, progress: Progress | None) -> None:
        self._progress = progress

    def add(self, description: str, total: float | None = None) -> Bar:
        """A bar counting to `total`; with no total, a spinner with the time elapsed."""
        if self._progress is None:
            return Bar(None, None)
        return Bar(self._progress, self._progress.add_task(description, total=total))


@contextmanager
def bars(ctx: typer.Context | None) -> Iterator[Bars]:
    """Progress bars for the duration of the block (cleared when it ends)."""
    if not shown(ctx):
        yield Bars(None)
        return
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    with progress:
        yield Bars(progress)


@contextmanager
def bar(ctx: typer.Context | None, description: str, total: float | None) -> Iterator[Bar]:
    """One bar for the block: `with bar(ctx, "indexing", len(files)) as b: ... b.advance()`."""
    with bars(ctx) as group:
        yield group.add(description, total)
