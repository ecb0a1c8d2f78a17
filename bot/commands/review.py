"""`factnote review`: the moderator queue on the command line."""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from bot import review
from bot.config import Settings
from bot.posting import post_one
from bot.runtime import open_runtime
from bot.service import build_adapters
from storage.db import Database
from storage.models import Request
from storage.repositories import latest_decision

app = typer.Typer(help="Drafts waiting for a moderator (review mode).")


def _db(ctx: typer.Context) -> Database:
    settings: Settings = ctx.obj
    return Database(settings.database_url)


def _fail(exc: Exception) -> None:
    Console(stderr=True, highlight=False).print(Text(str(exc)))
    raise typer.Exit(1)


@app.command("list")
def list_(
    ctx: typer.Context,
    newest_first: bool = typer.Option(False, "--newest-first"),
    json_: bool = typer.Option(False, "--json"),
) -> None:
    """Items awaiting review, oldest first."""
    db = _db(ctx)
    items = review.pending(db, oldest_first=not newest_first)
    db.dispose()
    if json_:
        typer.echo(
            json.dumps(
                [
                    {
                        "id": r.id,
                        "platform": r.platform,
                        "requester": r.requester,
                        "draft": r.reply_text,
                        "deadline": r.review_deadline.isoformat() if r.review_deadline else None,
                    }
                    for r in items
                ],
                ensure_ascii=False,
                indent=2,
            )
        )
        return
    table = Table("id", "platform", "requester", "deadline", "draft")
    for r in items:
        deadline = r.review_deadline.isoformat(timespec="minutes") if r.review_deadline else "-"
        table.add_row(str(r.id), r.platform, Text(r.requester), deadline, Text(r.reply_text or ""))
    Console(highlight=False).print(table)


@app.command("show")
def show(ctx: typer.Context, request_id: int) -> None:
    """One item: the post, the verdict, the draft, the evidence and the history."""
    db = _db(ctx)
    console = Console(highlight=False)
    with db.session() as session:
        request = session.get(Request, request_id)
        if request is None:
            _fail(ValueError(f"no request #{request_id}"))
            return
        decision = latest_decision(session, request_id)
        console.print(Text(f"#{request.id} {request.platform} {request.state} {request.reason}"))
        console.print(Text("post: " + str((request.target or {}).get("text", ""))))
        if decision is not None:
            console.print(Text(f"verdict: {decision.verdict} ({decision.confidence:.2f})"))
            for e in decision.evidence:
                console.print(Text(f"  [{e.tier.value}/{e.stance.value}] {e.url}\n    {e.quote}"))
        console.print(Text("draft: " + (request.reply_text or "")))
        for action in review.history(session, request_id):
            console.print(
                Text(
                    f"  {action.created_at:%Y-%m-%d %H:%M} {action.actor}: {action.action} "
                    f"{json.dumps(action.detail, ensure_ascii=False)}"
                )
            )
    db.dispose()


@app.command("approve")
def approve(ctx: typer.Context, request_id: int, actor: str = typer.Option("cli", "--as")) -> None:
    """Approve the draft and post it through the request's adapter."""
    settings: Settings = ctx.obj
    with open_runtime(settings) as runtime:
        try:
            review.approve(runtime.db, request_id, actor)
        except review.ReviewError as exc:
            _fail(exc)
        with runtime.db.session() as session:
            request = session.get(Request, request_id)
            platform = request.platform if request else ""
        adapter = build_adapters(settings).get(platform)
        if adapter is None:
            typer.echo(f"approved #{request_id}; adapter {platform!r} is not enabled here")
            return
        posted = post_one(runtime.db, adapter, request_id, settings.runtime)
        typer.echo(f"approved #{request_id}; " + ("posted" if posted else "posting deferred"))


@app.command("edit")
def edit(
    ctx: typer.Context,
    request_id: int,
    text: str,
    actor: str = typer.Option("cli", "--as"),
) -> None:
    """Replace the draft; the guard checks the new text (length, URLs only from evidence)."""
    settings: Settings = ctx.obj
    db = _db(ctx)
    try:
        report = review.edit(db, request_id, text, actor, settings.guard)
    except review.ReviewError as exc:
        _fail(exc)
        return
    finally:
        db.dispose()
    if not report.valid:
        typer.echo(f"refused by the guard ({report.length}/{report.limit}):")
        for problem in report.problems:
            typer.echo(f"  - {problem}")
        raise typer.Exit(1)
    typer.echo(f"draft of #{request_id} updated ({report.length}/{report.limit})")


@app.command("reject")
def reject(
    ctx: typer.Context,
    request_id: int,
    reason: str = typer.Option(..., "--reason", help=" | ".join(review.REJECT_REASONS)),
    note: str = typer.Option("", "--note"),
    actor: str = typer.Option("cli", "--as"),
) -> None:
    """Reject the draft with a reason; nothing is posted."""
    db = _db(ctx)
    try:
        review.reject(db, request_id, actor, reason, note)
    except review.ReviewError as exc:
        _fail(exc)
    finally:
        db.dispose()
    typer.echo(f"rejected #{request_id}")


@app.command("escalate")
def escalate(
    ctx: typer.Context,
    request_id: int,
    note: str = typer.Option("", "--note"),
    actor: str = typer.Option("cli", "--as"),
) -> None:
    """Flag for a senior moderator; the item stays queued without a deadline."""
    db = _db(ctx)
    try:
        review.escalate(db, request_id, actor, note)
    except review.ReviewError as exc:
        _fail(exc)
    finally:
        db.dispose()
    typer.echo(f"escalated #{request_id}")
