"""`factnote claims sync`: pull fact-checks from the configured sources (`[claim_sync]`: Fact
Check Tools API searches, ClaimReview feed dumps) into the main database's claim index, with
progress, and a summary per source: reviews fetched, new, updated, unchanged, skipped (each
with its reason), or why the source failed. The exit status is 1 when a source failed."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from bot import progress
from bot.commands.output import error, fail, say
from bot.commands.settings import loaded

if TYPE_CHECKING:
    from bot.ops.claim_sync import SourceReport

SKIPPED_SHOWN = 20  # reasons printed per source; the count is always whole


def sync(
    ctx: typer.Context,
    sources: list[str] = typer.Option(
        None,
        "--source",
        metavar="NAME",
        help="Only sources whose name contains this (repeatable).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the per-source summary as JSON."),
    full: bool = typer.Option(
        False,
        "--full",
        help="Read every source whole, ignoring where the last sync stopped (finds a review "
        "whose rating changed without a newer date).",
    ),
) -> None:
    """Import new and changed fact-checks from the Fact Check Tools API and feed dumps; what
    is already stored unchanged is not imported again."""
    from bot.ops.claim_sync import claim_sync, configured
    from pipeline.claims.index import ClaimIndex
    from pipeline.relevance.scoring import get_embedder  # loads torch: only when the command runs
    from pipeline.sources.credibility import PublisherTable
    from storage.db import Database
    from storage.indexes import open_claim_rows

    settings = loaded(ctx)
    if not configured(settings.claim_sync):
        fail(
            "no fact-check sources configured: set [claim_sync] queries, publishers "
            "(with FACTNOTE_FACTCHECK_API_KEY in the environment) or feeds"
        )
    db = Database(settings.database_url, busy_timeout_s=settings.database_busy_timeout_s)
    try:
        index = ClaimIndex(
            open_claim_rows(db.engine),
            get_embedder(settings.relevance),
            cfg=settings.claims,
            publishers=PublisherTable.from_config(settings.credibility),
        )
        with (
            index,
            progress.bars(ctx) as bars,
            claim_sync(settings, db, index, bars=bars, full=full) as run,
        ):
            reports = run.run((lambda name: any(s in name for s in sources)) if sources else None)
            total = len(index)
    finally:
        db.dispose()
    if as_json:
        print(json.dumps([_as_dict(r) for r in reports], ensure_ascii=False, indent=2))
    else:
        _print(reports, total)
    if any(not r.ok for r in reports):
        raise typer.Exit(1)


def _as_dict(report: SourceReport) -> dict[str, object]:
    data = asdict(report)
    data["newest_review"] = report.newest_review.isoformat() if report.newest_review else None
    return data


def _print(reports: list[SourceReport], total: int) -> None:
    table = Table(title="claims sync")
    for column in ("source", "fetched", "new", "updated", "unchanged", "skipped", "result"):
        table.add_column(column, overflow="fold")
    for r in reports:
        result = f"FAILED: {r.failure}" if r.failure else (r.note or "ok")
        cells = (r.source, r.fetched, r.new, r.updated, r.unchanged, len(r.skipped), result)
        # Text cells: names and reasons quote third-party data, never rich markup.
        table.add_row(*(Text(str(c)) for c in cells))
    Console().print(table)
    for r in reports:
        for reason in r.skipped[:SKIPPED_SHOWN]:
            say(f"skipped: {r.source}: {reason}")
        if len(r.skipped) > SKIPPED_SHOWN:
            say(f"skipped: {r.source}: … and {len(r.skipped) - SKIPPED_SHOWN} more")
        if r.failure:
            error(f"{r.source}: {r.failure}")
    say(f"claim index holds {total} review(s)")
