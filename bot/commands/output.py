"""Plain command output: URLs and page text are data, so no rich markup and no wrapping inside a
URL. A console per call, so that it writes to the stream and width in force now (tests swap
stdout).

Every user-facing problem starts with one prefix, whichever command says it: `factnote: error:`
for a mistake or failure, `factnote: warning:` for something that did not stop the command."""

from __future__ import annotations

from typing import NoReturn

import typer
from rich.console import Console

ERROR = "factnote: error: "
WARNING = "factnote: warning: "


def say(message: str) -> None:
    Console().print(message, markup=False, highlight=False, soft_wrap=True)


def _stderr(message: str) -> None:
    Console(stderr=True).print(message, markup=False, highlight=False, soft_wrap=True)


def warn(message: str) -> None:
    """Something the user should know that did not stop the command."""
    _stderr(WARNING + message)


def error(message: str) -> None:
    """A failure, one line; the command decides whether it goes on."""
    _stderr(ERROR + message)


def fail(message: str, code: int = 1) -> NoReturn:
    """A failure that ends the command with exit status `code` (2: a usage mistake)."""
    error(message)
    raise typer.Exit(code)


def print_urls(console: Console, urls: list[str], *, first: int = 1) -> None:
    """URLs on lines of their own, numbered as the table rows that cite them: a URL in a table
    cell is cut with "…" or broken across lines at a narrow terminal, and then it no longer
    opens or copies."""
    for number, url in enumerate(urls, start=first):
        console.print(f"[{number}] {url}", markup=False, highlight=False, soft_wrap=True)
