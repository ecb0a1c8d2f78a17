"""`factnote check`: run the pipeline on one post, record the decision, print it."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from bot.config import Settings
from bot.runtime import open_runtime
from pipeline.records import Decision, Platform, Post, utcnow
from storage.repositories import add_decision, create_cli_request


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


def load_post(text: str | None, post_json: Path | None) -> Post:
    if post_json is not None:
        try:
            return Post.model_validate_json(post_json.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:  # ValidationError, and bytes that are not UTF-8
            raise typer.BadParameter(f"{post_json}: not a valid post: {exc}") from exc
    if not text or not text.strip():
        raise typer.BadParameter("give the post's TEXT or --post-json FILE")
    return Post(id="cli", author="cli", text=text, created_at=utcnow())


def command(
    ctx: typer.Context,
    text: str | None = typer.Argument(None, help="The post's text."),
    post_json: Path | None = typer.Option(
        None, "--post-json", help="A post as JSON: id, author, text, created_at, quoted, parent."
    ),
    platform: Platform = typer.Option(Platform.X, "--platform", help="Who the reply is for."),
    as_of: datetime | None = typer.Option(
        None,
        "--as-of",
        help="Use only sources published before this time (replay/evaluation). "
        "Default: now, so a debunk published after the post counts.",
    ),
    replay: bool = typer.Option(False, "--replay", help="as-of = the post's own time."),
    json_: bool = typer.Option(False, "--json", help="Print the decision as JSON."),
) -> None:
    """Check one post and print the decision (nothing is posted)."""
    settings: Settings = ctx.obj
    post = load_post(text, post_json)
    if as_of is not None and as_of.tzinfo is None:
        raise typer.BadParameter("--as-of needs a time zone, e.g. 2026-01-31T12:00:00Z")
    when = post.created_at if replay else as_of
    with open_runtime(settings) as runtime:
        decision = runtime.checker.check(
            post, platform, as_of=when, replay=replay or as_of is not None
        )
        with runtime.db.transaction() as session:
            request = create_cli_request(session, post)
            add_decision(session, request, decision)
            request.state = _final_state(decision)
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
    if payload["evidence"]:
        table = Table("tier", "stance", "conf", "url", "quote", show_lines=False)
        for e in payload["evidence"]:
            table.add_row(
                e["tier"],
                e["stance"],
                f"{e['confidence']:.2f}",
                Text(e["url"]),
                Text(e["quote"][:160]),
            )
        console.print(table)
    if payload["candidates"]:
        table = Table("score", "url", "passage")
        for c in payload["candidates"]:
            table.add_row(f"{c['score']:.2f}", Text(c["url"]), Text(c["text"][:160]))
        console.print(table)
    llm = payload["llm"]
    console.print(
        Text(
            f"llm: {llm['calls']} call(s), {llm['prompt_tokens']}+{llm['completion_tokens']} "
            f"tokens; total {payload['timings'].get('total', 0):.1f}s; request "
            f"#{payload['request_id']}"
        )
    )
