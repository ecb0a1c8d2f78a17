"""Plain command output: URLs and page text are data, so no rich markup and no wrapping inside a
URL. A console per call, so that it writes to the stream and width in force now (tests swap
stdout)."""

from __future__ import annotations

from rich.console import Console


def say(message: str) -> None:
    Console().print(message, markup=False, highlight=False, soft_wrap=True)


def warn(message: str) -> None:
    Console(stderr=True).print(message, markup=False, highlight=False, soft_wrap=True)
