"""`factnote report` (the HTML audit report) and `factnote export` (decisions as JSONL/CSV)."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

import typer

from bot import progress
from bot.config import Settings
from bot.dates import parse_when
from bot.reports.export import Format, write_export
from storage.db import Database

SINCE_HELP = "from this date: YYYY-MM-DD (midnight UTC) or an ISO-8601 time (UTC if no zone)."


def report_command(
    ctx: typer.Context,
    out: Path = typer.Option(..., "--out", help="Directory to write index.html into."),
    since: datetime | None = typer.Option(
        None, "--since", parser=parse_when, metavar="DATE", help="Only requests " + SINCE_HELP
    ),
) -> None:
    """Write a self-contained HTML audit report (charts inline) of what the bot did."""
    from bot.reports.audit import write_report

    settings: Settings = ctx.obj
    db = Database(settings.database_url)
    try:
        with progress.bar(ctx, "writing the report", None):
            path = write_report(db, out, since)
    finally:
        db.dispose()
    typer.echo(str(path))


def export_command(
    ctx: typer.Context,
    format_: Format = typer.Option("jsonl", "--format", help="One JSON object a line, or CSV."),
    out: Path | None = typer.Option(None, "--out", help="File to write (default: stdout)."),
    since: datetime | None = typer.Option(
        None, "--since", parser=parse_when, metavar="DATE", help="Only decisions " + SINCE_HELP
    ),
) -> None:
    """One record per decision with its full trace, evidence and snapshot hashes."""
    fmt: Format = format_
    start = since
    settings: Settings = ctx.obj
    db = Database(settings.database_url)
    try:
        if out is None:
            count = write_export(db, fmt, sys.stdout, start)
        else:
            out.parent.mkdir(parents=True, exist_ok=True)
            with out.open("w", encoding="utf-8", newline="") as handle:
                count = write_export(db, fmt, handle, start)
    finally:
        db.dispose()
    if out is not None:
        typer.echo(f"{count} decision(s) written to {out}", err=True)
