"""`factnote run`: the bot (`factnote status` is in bot/commands/status.py).

Exit status of `run --once`, for cron and supervisors: 0 when every poll and every request
went through; `FAILED_EXIT` (69, EX_UNAVAILABLE in sysexits.h: a service it needs did not
work) when a poll failed or a request failed technically (failed, waiting for a retry, or its
reply not posted after an error); `LOCKED_EXIT` (75) when the database stayed locked.
Abstaining, skipping and needing an LLM are decisions, not failures, and so is a reply the
kill switch holds (a line says so).
"""

from __future__ import annotations

from typing import Literal

import typer
from rich.console import Console
from rich.text import Text

from bot import platforms
from bot.commands.output import fail
from bot.commands.status import LOCKED_EXIT, print_overview
from bot.config import Settings
from bot.notes.admission import notes_cycle
from bot.ops.runtime import open_runtime
from bot.ops.service import Bot, CycleReport, build_adapters
from bot.ops.startup import announce
from bot.ops.summary import overview
from pipeline.records import utcnow
from storage.db import DatabaseBusy

ModeOption = Literal["dry-run", "review", "live"]
FAILED_EXIT = 69  # EX_UNAVAILABLE: a poll or a request failed technically


def run_command(
    ctx: typer.Context,
    once: bool = typer.Option(
        False,
        "--once",
        help="One poll and drain, then exit: 0 when all went through, 69 when a poll or a "
        "request failed technically, 75 when the database stayed locked.",
    ),
    mode: ModeOption | None = typer.Option(
        None, "--mode", help="Overrides the configured mode, adapters' own modes included."
    ),
) -> None:
    """Run the bot: poll the enabled adapters, check what people ask about, act by mode."""
    settings: Settings = ctx.obj
    if mode is not None:
        apply_mode(settings, mode)  # validated before anything starts
    # Before the models load: a platform enabled without its credentials says so at once.
    # (Stored overrides change modes and thresholds, never what an adapter is built from.)
    adapters = build_adapters(settings)
    try:
        with open_runtime(settings) as runtime:
            settings = runtime.settings
            if mode is not None:
                # The operator's flag wins over modes an admin stored in the database.
                apply_mode(settings, mode)
            bot = Bot(runtime, adapters)
            announce(settings, runtime.shared)  # what it will do, and why it may do nothing
            if once:
                started = utcnow()
                report = bot.run_once()
                print_cycle(report)
                if settings.x_notes.enabled:
                    cycle = notes_cycle(runtime.db, started, settings.x_notes.test_mode)
                    Console(highlight=False).print(Text(cycle.line()))
                print_overview(overview(runtime.db), settings)
                if not report.ok:
                    raise typer.Exit(FAILED_EXIT)
            else:
                bot.run_forever()
    except DatabaseBusy as exc:
        # Another process held the database through every retry: one line, no traceback.
        fail(str(exc), LOCKED_EXIT)


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
        if p.error:
            line += f" ({'waiting' if p.deferred else 'error'}: {p.error})"
        console.print(Text(line))
    console.print(
        Text(
            f"triaged {report.triaged}, processed {report.processed}, posted {report.posted}, "
            f"expired {report.expired}"
        )
    )
    if report.failed_requests:
        ids = ", ".join(f"#{i}" for i in report.failed_requests)
        console.print(Text(f"failed technically: {len(report.failed_requests)} request(s): {ids}"))
    if report.held_requests:
        ids = ", ".join(f"#{i}" for i in report.held_requests)
        console.print(
            Text(
                f"replies held by the kill switch (not a failure): "
                f"{len(report.held_requests)} request(s): {ids}"
            )
        )
