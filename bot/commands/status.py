"""`factnote status`: what the bot is doing, read from the database alone.

It imports neither the runtime nor the pipeline, so it answers in well under a second.
"""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from bot.commands.output import fail
from bot.config import Settings
from bot.ops.summary import Overview, overview, poll_failing
from pipeline.redaction import shown_url

LOCKED_EXIT = 75  # EX_TEMPFAIL: try again later


def status_command(
    ctx: typer.Context, json_: bool = typer.Option(False, "--json", help="Print JSON.")
) -> None:
    """Queue sizes by state, last poll per adapter, rate-limit budgets, recent errors."""
    settings: Settings = ctx.obj
    from bot.notes.admission import admission
    from storage.db import Database, is_lock_error

    try:
        db = Database(settings.database_url, busy_timeout_s=settings.database_busy_timeout_s)
    except Exception as exc:
        if not is_lock_error(exc):
            raise
        fail("the database is locked by another process; try again later", LOCKED_EXIT)
    view = overview(db)
    notes = admission(db)
    db.dispose()
    if json_:
        typer.echo(
            json.dumps(
                {
                    "requests": view.by_state,
                    "cli_checks": view.cli_checks,
                    "polls": [
                        {
                            "adapter": p.adapter,
                            "last_poll_at": p.last_poll_at.isoformat() if p.last_poll_at else None,
                            "last_poll_new": p.last_poll_count,
                            "failing": poll_failing(p),
                            "last_error": p.last_error,
                            "last_error_at": (
                                p.last_error_at.isoformat() if p.last_error_at else None
                            ),
                            "next_poll_at": p.next_poll_at.isoformat() if p.next_poll_at else None,
                        }
                        for p in view.polls
                    ],
                    "rate_limits": [
                        {
                            "adapter": b.adapter,
                            "endpoint": b.endpoint,
                            "remaining": b.remaining,
                            "limit": b.limit,
                            "reset_at": b.reset_at.isoformat() if b.reset_at else None,
                        }
                        for b in view.budgets
                    ],
                    "errors_last_hour": [{"request": i, "error": e} for i, e in view.recent_errors],
                    "held": [{"request": i, "why": w} for i, w in view.held],
                    "community_notes": notes.as_json(),
                },
                indent=2,
            )
        )
        return
    print_overview(view, settings)
    if notes.written or settings.x_notes.enabled:
        Console(highlight=False).print(Text(notes.line()))


def print_overview(view: Overview, settings: Settings) -> None:
    console = Console(highlight=False)
    table = Table("state", "requests", title="Requests by outcome")
    for state, count in sorted(view.by_state.items()):
        table.add_row(state, str(count))
    table.add_row("total", str(view.total))
    console.print(table)
    if view.cli_checks:
        console.print(Text(f"factnote check runs, not counted above: {view.cli_checks}"))
    if view.polls:
        polls = Table("adapter", "last poll", "new", "state", "last error", title="Polling")
        for p in view.polls:
            error = p.last_error or ""
            if error and p.last_error_at is not None:
                error = f"{p.last_error_at.isoformat(timespec='seconds')}: {error}"
            polls.add_row(
                p.adapter,
                p.last_poll_at.isoformat(timespec="seconds") if p.last_poll_at else "-",
                str(p.last_poll_count),
                "failing" if poll_failing(p) else "ok",
                Text(error),
            )
        console.print(polls)
    if view.budgets:
        budgets = Table("adapter", "endpoint", "remaining", "reset", title="Rate limits")
        for b in view.budgets:
            budgets.add_row(
                b.adapter,
                b.endpoint,
                f"{b.remaining}/{b.limit}",
                b.reset_at.isoformat(timespec="seconds") if b.reset_at else "-",
            )
        console.print(budgets)
    if view.needs_llm:
        ids = ", ".join(f"#{i} ({s})" for i, s in view.needs_llm)
        console.print(
            Text(
                f"{len(view.needs_llm)} request(s) needed an LLM and none is configured "
                f"(set FACTNOTE_LLM_BASE_URL and FACTNOTE_LLM_MODEL): {ids}"
            )
        )
    for request_id, error in view.recent_errors:
        console.print(Text(f"error in the last hour, request #{request_id}: {error}"))
    for request_id, why in view.held:
        console.print(Text(f"held by the kill switch (not an error), request #{request_id}: {why}"))
    console.print(Text(f"mode: {settings.mode}; audit data: {shown_url(settings.database_url)}"))
