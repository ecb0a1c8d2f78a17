"""`factnote review`: the moderator queue on the command line, and the posting kill switch.

Every action is done as a review-app account (`--as NAME`, see `factnote users`): an unknown
or disabled name is refused in one line, and the account's role counts as in the web app (only
a senior moderator or an admin decides an escalated item; only an admin flips the switch).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from bot import overrides, platforms
from bot.commands.output import fail
from bot.config import Settings
from bot.moderation import actions as review
from bot.moderation import users
from bot.moderation.actions import Reviewer
from bot.requests.posting import post_one
from pipeline.records import utcnow
from storage import review_queue
from storage.db import Database
from storage.models import Request
from storage.repositories import latest_decision

app = typer.Typer(help="Drafts waiting for a moderator (review mode).")

AS_HELP = "The review-app account you act as (see `factnote users list`)."


def _db(ctx: typer.Context) -> Database:
    settings: Settings = ctx.obj
    return Database(settings.database_url)


def _fail(exc: Exception | str) -> NoReturn:
    fail(str(exc))  # one line, however narrow the terminal


def _reviewer(db: Database, name: str, *, admin: bool = False) -> Reviewer:
    """The account `--as` names, as `bot.moderation.actions` sees it; a one-line refusal
    otherwise."""
    try:
        account = users.reviewer(db, name.strip())
    except users.UserError as exc:
        _fail(exc)
    if admin and not account.is_admin:
        _fail(f"{account.username} is {account.role}: only an admin may change posting")
    return Reviewer(account.username, account.is_senior)


@contextmanager
def _acting_as(
    ctx: typer.Context,
    actor: str,
    *,
    admin: bool = False,
    refused: type[Exception] = review.ReviewError,
    prefix: str = "",
) -> Iterator[tuple[Database, Reviewer]]:
    """The database and the `--as` account for one action: the action's refusal (`refused`)
    ends the command in one line, and the database is closed however it ends."""
    db = _db(ctx)
    try:
        yield db, _reviewer(db, actor, admin=admin)
    except refused as exc:
        _fail(f"{prefix}{exc}")
    finally:
        db.dispose()


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


@app.command("list")
def list_(
    ctx: typer.Context,
    newest_first: bool = typer.Option(False, "--newest-first"),
    page: int = typer.Option(1, "--page", min=1, help="Which page of the queue."),
    per_page: int = typer.Option(
        review_queue.PER_PAGE, "--per-page", min=1, max=1000, help="Items per page."
    ),
    json_: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Items awaiting review, oldest first, one page at a time; says how many there are."""
    db = _db(ctx)
    flt = review_queue.QueueFilter(order="newest" if newest_first else "oldest")
    try:
        with db.session() as session:
            found = review_queue.queue_page(session, flt, utcnow(), page=page, per_page=per_page)
    finally:
        db.dispose()
    if json_:
        typer.echo(json.dumps(_page_json(found), ensure_ascii=False, indent=2))
        return
    table = Table("id", "platform", "requester", "deadline", "who")
    for it in found.items:
        deadline = it.deadline.isoformat(timespec="minutes") if it.deadline else "-"
        who = ", ".join(
            part
            for part in (
                f"escalated by {it.escalated_by}" if it.escalated_by else "",
                f"claimed by {it.claimed_by}" if it.claimed_by else "",
            )
            if part
        )
        table.add_row(str(it.id), it.platform, Text(it.requester), deadline, Text(who or "-"))
    console = Console(highlight=False)
    console.print(table)
    for it in found.items:  # drafts hold URLs: a line each, never cut or wrapped by the table
        console.print(Text(f"#{it.id} draft: {it.draft}"), soft_wrap=True)
    typer.echo(_page_line(found))


def _page_line(found: review_queue.QueuePage) -> str:
    """The true total, and how to see the rest: a list is never silently cut."""
    if not found.total:
        return "Nothing awaiting review."
    line = (
        f"Items {found.first}-{found.last} of {found.total} awaiting review"
        f" (page {found.page} of {found.pages})"
    )
    if found.page < found.pages:
        line += f"; next: --page {found.page + 1}"
    return line + "."


def _page_json(found: review_queue.QueuePage) -> dict[str, Any]:
    return {
        "total": found.total,
        "page": found.page,
        "pages": found.pages,
        "per_page": found.per_page,
        "items": [
            {
                "id": it.id,
                "platform": it.platform,
                "requester": it.requester,
                "draft": it.draft,
                "deadline": _iso(it.deadline),
                "escalated_by": it.escalated_by,
                "claimed_by": it.claimed_by,
            }
            for it in found.items
        ],
    }


def _item(session: Any, request: Request) -> dict[str, Any]:
    """One item as `review show --json` prints it."""
    decision = latest_decision(session, request.id)
    return {
        "id": request.id,
        "platform": request.platform,
        "state": request.state,
        "mode": request.mode,
        "reason": request.reason,
        "requester": request.requester,
        "created_at": _iso(request.created_at),
        "review_deadline": _iso(request.review_deadline),
        "escalated_by": request.escalated_by,
        "escalated_at": _iso(request.escalated_at),
        "claimed_by": request.claimed_by,
        "claimed_at": _iso(request.claimed_at),
        "post": request.target or {},
        "draft": request.reply_text,
        "bot_draft": decision.reply if decision is not None else None,
        "verdict": decision.verdict.value if decision and decision.verdict else None,
        "confidence": decision.confidence if decision is not None else None,
        "evidence": [e.model_dump(mode="json") for e in decision.evidence] if decision else [],
        "candidates": [c.model_dump(mode="json") for c in decision.candidates] if decision else [],
        "reply_id": request.reply_id,
        "posted_at": _iso(request.posted_at),
        "last_error": request.last_error,
        "history": [
            {
                "at": _iso(a.created_at),
                "actor": a.actor,
                "action": a.action,
                "detail": a.detail,
            }
            for a in review.history(session, request.id)
        ],
    }


@app.command("show")
def show(
    ctx: typer.Context,
    request_id: int,
    json_: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """One item: the post, the verdict, the draft, the evidence and the history."""
    db = _db(ctx)
    console = Console(highlight=False)
    with db.session() as session:
        request = session.get(Request, request_id)
        if request is None:
            db.dispose()
            _fail(f"no request #{request_id}")
        if json_:
            typer.echo(json.dumps(_item(session, request), ensure_ascii=False, indent=2))
            db.dispose()
            return
        decision = latest_decision(session, request_id)
        console.print(Text(f"#{request.id} {request.platform} {request.state} {request.reason}"))
        if request.escalated_by:
            console.print(Text(f"escalated by {request.escalated_by}"))
        if request.claimed_by:
            console.print(Text(f"claimed by {request.claimed_by}"))
        console.print(Text("post: " + str((request.target or {}).get("text", ""))))
        if decision is not None:
            console.print(Text(f"verdict: {decision.verdict} ({decision.confidence:.2f})"))
            for e in decision.evidence:
                console.print(Text(f"  [{e.tier.value}/{e.stance.value}] {e.url}\n    {e.quote}"))
            for c in decision.candidates:
                console.print(Text(f"  candidate ({c.score:.2f}) {c.url}\n    {c.text}"))
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
def approve(
    ctx: typer.Context,
    request_id: int,
    actor: str = typer.Option(..., "--as", help=AS_HELP),
) -> None:
    """Approve the draft (the guard checks it once more) and post it through the request's
    adapter when it is enabled here and posting is not stopped."""
    settings: Settings = ctx.obj
    db = _db(ctx)
    try:
        who = _reviewer(db, actor)
        settings = overrides.apply_overrides(settings, db)
        try:
            review.approve(db, request_id, who, guard_cfg=settings.guard)
        except review.ReviewError as exc:
            _fail(exc)
        with db.session() as session:
            request = session.get(Request, request_id)
            platform = request.platform if request else ""
        spec = platforms.spec_for(platform)
        if spec is None or not spec.section(settings).enabled:
            typer.echo(f"approved #{request_id}; adapter {platform!r} is not enabled here")
            return
        hold = overrides.posting_hold(db, platform)
        if hold is not None:
            typer.echo(f"approved #{request_id}; held: {hold}")
            return
        posted = post_one(db, spec.build(settings), request_id, settings.runtime)
        typer.echo(f"approved #{request_id}; " + ("posted" if posted else "posting deferred"))
    finally:
        db.dispose()


@app.command("edit")
def edit(
    ctx: typer.Context,
    request_id: int,
    text: str,
    actor: str = typer.Option(..., "--as", help=AS_HELP),
) -> None:
    """Replace the draft; the guard checks the new text (length, URLs only from evidence)."""
    settings: Settings = ctx.obj
    with _acting_as(ctx, actor) as (db, who):
        report = review.edit(
            db, request_id, text, who, overrides.apply_overrides(settings, db).guard
        )
    if not report.valid:
        problems = "; ".join(map(str, report.problems))
        fail(f"refused by the guard ({report.length}/{report.limit}): {problems}")
    typer.echo(f"draft of #{request_id} updated ({report.length}/{report.limit})")


@app.command("reject")
def reject(
    ctx: typer.Context,
    request_id: int,
    reason: str = typer.Option(..., "--reason", help=" | ".join(review.REJECT_REASONS)),
    note: str = typer.Option("", "--note"),
    actor: str = typer.Option(..., "--as", help=AS_HELP),
) -> None:
    """Reject the draft with a reason; nothing is posted."""
    with _acting_as(ctx, actor) as (db, who):
        review.reject(db, request_id, who, reason, note)
    typer.echo(f"rejected #{request_id}")


@app.command("escalate")
def escalate(
    ctx: typer.Context,
    request_id: int,
    note: str = typer.Option("", "--note"),
    actor: str = typer.Option(..., "--as", help=AS_HELP),
) -> None:
    """Flag for a senior moderator: only a senior moderator or an admin edits or decides it
    now, before its new deadline (`[runtime] escalation_ttl_h`)."""
    settings: Settings = ctx.obj
    ttl_h = settings.runtime.escalation_ttl_h
    with _acting_as(ctx, actor) as (db, who):
        review.escalate(db, request_id, who, note, ttl_h=ttl_h)
    typer.echo(f"escalated #{request_id}: a senior decides it within {ttl_h:g} h or it expires")


@app.command("claim")
def claim(
    ctx: typer.Context,
    request_id: int,
    actor: str = typer.Option(..., "--as", help=AS_HELP),
    to: str = typer.Option("", "--to", help="Assign it to this account instead."),
    take_over: bool = typer.Option(False, "--take-over", help="Take it from whoever has it."),
) -> None:
    """Take an item (others see who has it), or assign it to someone."""
    with _acting_as(ctx, actor) as (db, who):
        holder = review.claim(db, request_id, who, assignee=to or None, take_over=take_over)
    typer.echo(f"#{request_id} is claimed by {holder}")


@app.command("release")
def release(
    ctx: typer.Context,
    request_id: int,
    actor: str = typer.Option(..., "--as", help=AS_HELP),
) -> None:
    """Give a claimed item back to the queue."""
    with _acting_as(ctx, actor) as (db, who):
        review.release(db, request_id, who)
    typer.echo(f"#{request_id} released")


@app.command("pause")
def pause(
    ctx: typer.Context,
    platform: str = typer.Argument(..., help="A platform name, or '*' for every platform."),
    actor: str = typer.Option(..., "--as", help="An admin account."),
    note: str = typer.Option("", "--note", help="Why (shown to everyone)."),
) -> None:
    """Stop posting to a platform now: the running bot posts nothing there until `resume`."""
    with _acting_as(ctx, actor, admin=True, refused=overrides.OverrideError) as (db, who):
        changed = overrides.pause(db, platform, who.name, note)
    typer.echo(f"posting to {platform} " + ("paused" if changed else "was already paused"))


@app.command("resume")
def resume(
    ctx: typer.Context,
    platform: str = typer.Argument(..., help="A platform name, or '*' for every platform."),
    actor: str = typer.Option(..., "--as", help="An admin account."),
) -> None:
    """Lift a pause: the replies it held go out at the bot's next posting run."""
    with _acting_as(ctx, actor, admin=True, refused=overrides.OverrideError) as (db, who):
        changed = overrides.resume(db, platform, who.name)
    typer.echo(f"posting to {platform} " + ("resumed" if changed else "was not paused"))


@app.command("mode")
def mode(
    ctx: typer.Context,
    value: str = typer.Argument(..., help="dry-run | review | live ('' with --platform: global)"),
    platform: str = typer.Option("", "--platform", help="Only this platform."),
    actor: str = typer.Option(..., "--as", help="An admin account."),
) -> None:
    """Override the mode (all platforms, or one): dry-run stops posting at the next post."""
    key = f"{platform.strip()}.mode" if platform.strip() else "mode"
    refused = overrides.OverrideError
    with _acting_as(ctx, actor, admin=True, refused=refused, prefix=f"{key}: ") as (db, who):
        parsed = overrides.set_override(db, key, value, who.name)
    typer.echo(f"{key} set to {parsed or '(follow global)'}")


@app.command("switch")
def switch(
    ctx: typer.Context,
    json_: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Where posting stands: per platform, the mode now, what stops it, the replies held."""
    settings: Settings = ctx.obj
    db = _db(ctx)
    try:
        held = overrides.held_count(db)
        rows: list[dict[str, Any]] = [
            {
                "platform": spec.name,
                "mode": overrides.live_mode(db, settings, spec.name),
                "stopped": overrides.posting_hold(db, spec.name),
                "held": held.get(spec.name, 0),
            }
            for spec in platforms.specs()
        ]
    finally:
        db.dispose()
    if json_:
        typer.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    table = Table("platform", "mode", "posting", "held")
    for row in rows:
        table.add_row(
            row["platform"], row["mode"], Text(row["stopped"] or "running"), str(row["held"])
        )
    Console(highlight=False).print(table)
