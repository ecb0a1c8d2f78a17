"""`factnote report` (the HTML audit report) and `factnote export` (decisions as JSONL/CSV)."""

from __future__ import annotations

import sys
from datetime import UTC, date, datetime
from pathlib import Path

import typer

from bot.config import Settings
from bot.export import Format, write_export
from storage.db import Database


def _since(value: str | None) -> datetime | None:
    """A date (YYYY-MM-DD, midnight UTC) or a full ISO time; naive times are taken as UTC."""
    if not value:
        return None
    try:
        if len(value) == 10:
            return datetime.combine(date.fromisoformat(value), datetime.min.time(), tzinfo=UTC)
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise typer.BadParameter(f"not a date: {value!r} (use YYYY-MM-DD)") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def report_command(
    ctx: typer.Context,
    out: Path = typer.Option(..., "--out", help="Directory to write index.html into."),
    since: str | None = typer.Option(None, "--since", help="Only requests from this date."),
) -> None:
    """Write a self-contained HTML audit report (charts inline) of what the bot did."""
    from bot.report import write_report

    settings: Settings = ctx.obj
    db = Database(settings.database_url)
    try:
        path = write_report(db, out, _since(since))
    finally:
        db.dispose()
    typer.echo(str(path))


def export_command(
    ctx: typer.Context,
    format_: str = typer.Option("jsonl", "--format", help="jsonl | csv"),
    out: Path | None = typer.Option(None, "--out", help="File to write (default: stdout)."),
    since: str | None = typer.Option(None, "--since", help="Only decisions from this date."),
) -> None:
    """One record per decision with its full trace, evidence and snapshot hashes."""
    if format_ not in ("jsonl", "csv"):
        raise typer.BadParameter("use jsonl or csv", param_hint="--format")
    fmt: Format = "csv" if format_ == "csv" else "jsonl"
    start = _since(since)
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
