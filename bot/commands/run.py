"""`factnote run`: the bot (`factnote status` is in bot/commands/status.py)."""

from __future__ import annotations

from typing import Literal

import typer
from rich.console import Console
from rich.text import Text

from bot import platforms
from bot.commands.status import LOCKED_EXIT, print_overview
from bot.config import Settings
from bot.runtime import open_runtime
from bot.service import Bot, CycleReport, build_adapters
from bot.summary import overview
from storage.db import DatabaseBusy

ModeOption = Literal["dry-run", "review", "live"]


def run_command(
    ctx: typer.Context,
    once: bool = typer.Option(False, "--once", help="One poll and drain, then exit."),
    mode: str | None = typer.Option(
        None, "--mode", help="dry-run | review | live (overrides config, adapters included)."
    ),
) -> None:
    """Run the bot: poll the enabled adapters, check what people ask about, act by mode."""
    settings: Settings = ctx.obj
    if mode is not None:
        apply_mode(settings, mode)  # validated before anything starts
    try:
        with open_runtime(settings) as runtime:
            settings = runtime.settings
            if mode is not None:
                # The operator's flag wins over modes an admin stored in the database.
                apply_mode(settings, mode)
            bot = Bot(runtime, build_adapters(settings))
            if once:
                report = bot.run_once()
                print_cycle(report)
                print_overview(overview(runtime.db), settings)
            else:
                bot.run_forever()
    except DatabaseBusy as exc:
        # Another process held the database through every retry: one line, no traceback.
        typer.echo(f"factnote run: {exc}", err=True)
        raise typer.Exit(LOCKED_EXIT) from None


def apply_mode(settings: Settings, mode: str) -> None:
    if mode not in ("dry-run", "review", "live"):
        raise typer.BadParameter("mode must be dry-run, review or live", param_hint="--mode")
    settings.mode = mode  # type: ignore[assignment]
    for spec in platforms.specs():
        spec.section(settings).mode = None


def print_cycle(report: CycleReport) -> None:
    console = Console(highlight=False)
    for p in report.polls:
        line = f"poll {p.adapter}: {p.new} new of {p.seen}"
        console.print(Text(line + (f" (error: {p.error})" if p.error else "")))
    console.print(
        Text(
            f"triaged {report.triaged}, processed {report.processed}, posted {report.posted}, "
            f"expired {report.expired}"
        )
    )
