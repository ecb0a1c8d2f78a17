"""`factnote guard`: run the reply guard on a text from the command line.

Exit code 0 when the text passes, 1 when it does not, so scripts can gate on it.
"""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.text import Text

from pipeline.config import GuardConfig
from pipeline.records import Platform
from pipeline.reply.guard import check_text


def command(
    text: str = typer.Argument(..., help="The draft reply to check."),
    platform: Platform = typer.Option(Platform.X, "--platform", "-p", help="Counting rules."),
    evidence_url: list[str] = typer.Option(
        [], "--evidence-url", "-e", help="A URL the reply may cite (repeatable)."
    ),
    json_: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Check a draft reply against the guard's hard rules (no evidence/verdict rules here)."""
    report = check_text(text, platform, evidence_urls=evidence_url, cfg=GuardConfig())
    if json_:
        payload = {
            "valid": report.valid,
            "length": report.length,
            "limit": report.limit,
            "problems": [str(p) for p in report.problems],
            "urls": report.urls,  # the links a platform may create: approved, as written
        }
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        # Problems quote untrusted text (URLs, post words): print it as plain Text, never markup.
        console = Console(highlight=False)
        status = "valid" if report.valid else "INVALID"
        console.print(Text(f"{status} ({platform.value}): {report.length}/{report.limit}"))
        for problem in report.problems:
            console.print(Text(f"  - {problem}"))
        for url in report.urls:
            console.print(Text(f"  link: {url}"))
    if not report.valid:
        raise typer.Exit(code=1)
