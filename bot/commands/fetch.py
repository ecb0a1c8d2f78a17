"""`factnote fetch URL`: fetch one page and show exactly what the pipeline sees of it.

Useful to debug why a page was or was not used as evidence. Exit code 0 when the fetch worked,
1 when it failed (the failure is still printed).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import typer
from rich.console import Console
from rich.text import Text

from bot.dates import parse_when
from pipeline.config import FetchConfig
from pipeline.records import Document
from pipeline.web.fetch import Fetcher, usability

PREVIEW_CHARS = 500


def command(
    url: str = typer.Argument(..., help="The page to fetch."),
    json_: bool = typer.Option(False, "--json", help="Print JSON, including the full text."),
    as_of: datetime | None = typer.Option(
        None,
        "--as-of",
        parser=parse_when,
        metavar="DATE",
        help="The time to judge usability against (default: now); a bare date is 00:00 UTC.",
    ),
) -> None:
    """Fetch a page with the default fetch settings and print the extracted snapshot."""
    cfg = FetchConfig()
    when = as_of or datetime.now(UTC)
    with Fetcher(cfg) as fetcher:
        doc = fetcher.fetch(url)
    # The CLI cannot know the publisher's tier, so it judges as a live decision for an ordinary
    # (non-reference) publisher: the strictest live reading of the dateless rule.
    reason = usability(doc, as_of=when, replay=False, reference_ok=False, cfg=cfg)
    if json_:
        typer.echo(json.dumps(_payload(doc, when, reason), ensure_ascii=False, indent=2))
    else:
        _print_table(doc, when, reason)
    if not doc.ok:
        raise typer.Exit(code=1)


def _payload(doc: Document, as_of: datetime, reason: str | None) -> dict[str, Any]:
    data: dict[str, Any] = doc.model_dump(mode="json")
    data["as_of"] = as_of.isoformat()
    data["usable"] = reason is None
    data["usability_reason"] = reason
    return data


def _print_table(doc: Document, as_of: datetime, reason: str | None) -> None:
    if doc.published is not None:
        published = f"{doc.published.isoformat()} ({doc.date_source})"
    else:
        published = "none (dateless)" if doc.ok else ""
    rows: list[tuple[str, str]] = [
        ("url", doc.url),
        ("final url", doc.final_url or ""),
        ("canonical url", doc.canonical_url),
        ("ok", "yes" if doc.ok else f"no: {doc.error}"),
        ("status", "" if doc.status_code is None else str(doc.status_code)),
        ("content type", doc.content_type or ""),
        ("title", doc.title),
        ("published", published),
        ("words", str(doc.word_count)),
        ("content hash", doc.content_hash),
        ("fetched at", doc.fetched_at.isoformat()),
        ("as-of", as_of.isoformat()),
        ("usable", "yes" if reason is None else f"no: {reason}"),
    ]
    console = Console(highlight=False)
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        # A line per field, never wrapped by us (a URL stays whole at any terminal width);
        # page content is untrusted: plain Text, never rich markup.
        line = Text(f"{name:<{width}}  ", style="bold") + Text(value)
        console.print(line, soft_wrap=True)
    if doc.text:
        preview = doc.text[:PREVIEW_CHARS] + ("…" if len(doc.text) > PREVIEW_CHARS else "")
        console.print(Text("\n" + preview))
