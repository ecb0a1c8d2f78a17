"""`factnote check`: run the pipeline on one post, record the decision, print it.

The runtime (the whole pipeline, the LLM client, the database layer) is imported when the
command runs, not when the module is: `factnote check --help` and a mistyped argument should
not wait seconds for imports the answer does not need.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table
from rich.text import Text

from bot.commands.output import fail, print_urls
from bot.dates import parse_when
from pipeline.records import Decision, Platform, Post, utcnow

if TYPE_CHECKING:
    from bot.config import Settings


def decision_json(decision: Decision, request_id: int | None = None) -> dict[str, Any]:
    calls = decision.trace.llm_calls
    return {
        "request_id": request_id,
        "status": decision.status.value,
        "verdict": decision.verdict.value if decision.verdict else None,
        "confidence": decision.confidence,
        "platform": decision.platform.value,
        "reply": decision.reply,
        "urls": decision.urls,
        "evidence": [
            {
                "url": e.url,
                "tier": e.tier.value,
                "stance": e.stance.value,
                "confidence": e.confidence,
                "quote": e.quote,
                "relevance": e.relevance,
                "published": e.published.isoformat() if e.published else None,
            }
            for e in decision.evidence
        ],
        "candidates": [
            {"url": p.url, "score": round(p.score, 4), "text": p.text} for p in decision.candidates
        ],
        "reasons": decision.reasons,
        "error": decision.error,
        "lang": decision.lang,
        "as_of": decision.as_of.isoformat(),
        "queries": [q for r in decision.trace.rounds for q in r.queries],
        "llm": {
            "calls": len(calls),
            "failed_calls": sum(1 for c in calls if not c.ok),
            "prompt_tokens": sum(c.prompt_tokens for c in calls),
            "completion_tokens": sum(c.completion_tokens for c in calls),
            "cost_usd": round(sum(c.cost_usd for c in calls), 6),
        },
        "timings": decision.timings,
    }


def load_post(
    text: str | None, post_json: Path | None, bot_handles: Sequence[str] = ("factnote",)
) -> Post:
    """The post to check: TEXT, or the post in a JSON file. A file holding a summons (a post
    that mentions one of `bot_handles`, in the local inbox format) gives the post it asks
    about, as the bot would check it: the quoted post, else the parent, else its own text."""
    if post_json is not None:
        try:
            raw = post_json.read_text(encoding="utf-8")
        except FileNotFoundError:
            fail(f"{post_json}: no such file", 2)
        except UnicodeDecodeError:
            fail(f"{post_json}: not UTF-8 text", 2)
        except OSError as exc:
            fail(f"{post_json}: cannot read it: {exc.strerror or exc}", 2)
        asked = _summons_target(post_json, raw, bot_handles)
        if asked is not None:
            return asked
        try:
            return Post.model_validate_json(raw)
        except ValidationError as exc:
            fail(f"{post_json}: not a valid post: {invalid_fields(exc)}", 2)
    if not text or not text.strip():
        raise typer.BadParameter("give the post's TEXT or --post-json FILE")
    return Post(id="cli", author="cli", text=text, created_at=utcnow())


def invalid_fields(exc: ValidationError) -> str:
    """A pydantic error on a JSON file in one line: the missing fields named together, then
    each other problem by field, never the input echoed."""
    errors = exc.errors()
    if any(e["type"] == "json_invalid" for e in errors):
        return "not JSON: " + "; ".join(
            str(e.get("ctx", {}).get("error", e["msg"])) for e in errors
        )
    missing = [".".join(map(str, e["loc"])) for e in errors if e["type"] == "missing"]
    others = [
        f"{'.'.join(map(str, e['loc'])) or 'the file'}: {e['msg']}"
        for e in errors
        if e["type"] != "missing"
    ]
    said = [f"missing field(s) {', '.join(missing)}"] if missing else []
    return "; ".join(said + others)


def _summons_target(path: Path, raw: str, bot_handles: Sequence[str]) -> Post | None:
    """The post a summons file asks about, read by the local adapter as an inbox entry is;
    None when the file is not a summons (its text mentions none of our accounts)."""
    from adapters.base import TargetStatus
    from adapters.local import LocalAdapter
    from bot.requests.to_pipeline import asked_about, mentions, target_post

    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    said = data.get("text") if isinstance(data, dict) else None
    if not isinstance(said, str) or not mentions(said, bot_handles):
        return None
    adapter = LocalAdapter(path.parent, os.devnull, bot_handle=bot_handles[0])
    summons = adapter.read_summons(path.name, raw)
    post = target_post(summons)
    if summons.target_status is TargetStatus.UNAVAILABLE or post is None:
        raise typer.BadParameter(
            f"{path}: mentions @{bot_handles[0]} but is not a summons in the inbox format: "
            f"{summons.target_reason}"
        )
    typer.echo(f"{path}: a summons by @{summons.author}; checking {asked_about(summons)}", err=True)
    return post


def command(
    ctx: typer.Context,
    text: str | None = typer.Argument(None, help="The post's text."),
    post_json: Path | None = typer.Option(
        None,
        "--post-json",
        help="A post as JSON: id, author, text, created_at, quoted, parent. A summons "
        "(mentions the bot; the local inbox format) checks the post it asks about.",
    ),
    platform: Platform = typer.Option(Platform.X, "--platform", help="Who the reply is for."),
    as_of: datetime | None = typer.Option(
        None,
        "--as-of",
        parser=parse_when,  # the one date reading of every command: a bare date is 00:00 UTC
        metavar="DATE",
        help="Use only sources published before this time (replay/evaluation). "
        "Default: now, so a debunk published after the post counts.",
    ),
    replay: bool = typer.Option(False, "--replay", help="as-of = the post's own time."),
    json_: bool = typer.Option(False, "--json", help="Print the decision as JSON."),
) -> None:
    """Check one post and print the decision (nothing is posted)."""
    from bot import platforms
    from bot.ops.runtime import open_runtime
    from bot.requests import lifecycle
    from storage.repositories import add_decision, create_cli_request

    settings: Settings = ctx.obj
    handles = [spec.bot_handle(settings) for spec in platforms.specs()]
    post = load_post(text, post_json, handles or ("factnote",))
    when = post.created_at if replay else as_of
    with open_runtime(settings) as runtime:
        decision = runtime.checker.check(
            post, platform, as_of=when, replay=replay or as_of is not None
        )
        with runtime.db.transaction() as session:
            request = create_cli_request(session, post)
            add_decision(session, request, decision)
            request.state = _final_state(decision)
            lifecycle.created(session, request, lifecycle.Actor(lifecycle.ActorKind.CLI, "check"))
            request_id = request.id
    payload = decision_json(decision, request_id)
    if json_:
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        _print(payload)
    if decision.status.value == "failed":
        raise typer.Exit(code=2)


def _final_state(decision: Decision) -> str:
    return {
        "reply": "dry_run",
        "abstain": "abstained",
        "needs_llm": "needs_llm",
        "failed": "failed",
    }[decision.status.value]


def _print(payload: dict[str, Any]) -> None:
    # Post text, quotes and URLs are untrusted: always printed as plain Text, never as markup.
    console = Console(highlight=False)
    head = f"{payload['status'].upper()}"
    if payload["verdict"]:
        head += f"  verdict={payload['verdict']}  confidence={payload['confidence']:.2f}"
    console.print(Text(head, style="bold"))
    if payload["reply"]:
        console.print(Text("reply: " + payload["reply"]))
    for reason in payload["reasons"]:
        console.print(Text("- " + reason))
    if payload["error"]:
        console.print(Text("error: " + payload["error"], style="red"))
    # URLs under each table, a line each (`print_urls`), so that none is cut or wrapped.
    if payload["evidence"]:
        table = Table("#", "tier", "stance", "conf", "quote", show_lines=False)
        for number, e in enumerate(payload["evidence"], start=1):
            table.add_row(
                str(number),
                e["tier"],
                e["stance"],
                f"{e['confidence']:.2f}",
                Text(e["quote"][:160]),
            )
        console.print(table)
        print_urls(console, [e["url"] for e in payload["evidence"]])
    if payload["candidates"]:
        table = Table("#", "score", "passage")
        for number, c in enumerate(payload["candidates"], start=1):
            table.add_row(str(number), f"{c['score']:.2f}", Text(c["text"][:160]))
        console.print(table)
        print_urls(console, [c["url"] for c in payload["candidates"]])
    llm = payload["llm"]
    console.print(
        Text(
            f"llm: {llm['calls']} call(s), {llm['prompt_tokens']}+{llm['completion_tokens']} "
            f"tokens; total {payload['timings'].get('total', 0):.1f}s; request "
            f"#{payload['request_id']}"
        )
    )
