"""`factnote memory`: audit and edit the experience memory, and learn from moderators.

`learn` distills the moderator actions not yet learned from (`bot.memory.learn`) and, with
`--judge N`, judges recent decisions (stored with them) and learns from that, then deletes
the items that decayed — the same pass a running bot makes every
`runtime.memory_learn_interval_s` (`bot.memory.learn.schedule_learning`); `list` searches the
items with their source episodes (the web app's admin Memory page does the same);
`disable`, `enable` and `delete` govern one item; `export` and `import` carry items between
deployments explicitly. An item learned from the bot's own episodes is proposed: `list
--proposed` shows those waiting, `approve ID --as NAME` lets checks use one, `reject ID --as
NAME` never (NAME is a review-app account, recorded with the decision, as on the Memory
page). Operators only: the command needs the deployment's database and settings.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from bot.commands.output import fail, say
from bot.commands.settings import loaded

if TYPE_CHECKING:
    from bot.memory.store import StoredMemory

app = typer.Typer(
    help="Experience memory: learn, list, approve, reject, disable, delete, export, import."
)


@contextmanager
def _memory(ctx: typer.Context) -> Iterator[StoredMemory]:
    from bot.memory.store import StoredMemory
    from storage.db import Database

    settings = loaded(ctx)
    db = Database(settings.database_url)
    try:
        yield StoredMemory(db, settings.memory)
    finally:
        db.dispose()


@app.command("learn")
def learn(
    ctx: typer.Context,
    limit: int = typer.Option(50, "--limit", min=1, help="Moderator actions at most."),
    judge: int = typer.Option(
        0, "--judge", min=0, help="Also judge this many recent unjudged decisions."
    ),
) -> None:
    """Distill moderator actions not yet learned from; with --judge, judge recent decisions
    (stored with them) and learn from the judgments; then delete the items that decayed."""
    from bot.memory.learn import judge_decisions, learn_from_reviews
    from pipeline.learning.judge import Judge
    from pipeline.llm.client import CallLedger, LLMClient

    settings = loaded(ctx)
    llm = LLMClient(settings.judge.llm_config(settings.llm))
    if not llm.configured:
        fail("no LLM endpoint configured: distillation needs one", 2)
    ledger = CallLedger()
    with _memory(ctx) as memory:
        report = learn_from_reviews(memory.db, memory, llm, ledger, limit=limit)
        say(
            f"moderator actions {report.episodes}  items {report.items}  failures {report.failures}"
        )
        if judge:
            grader = Judge(llm, settings.guard, seed=settings.judge.seed)
            judged = judge_decisions(memory.db, memory, grader, ledger, limit=judge)
            say(f"judged {judged.episodes}  items {judged.items}  failures {judged.failures}")
        if memory.cfg.mode == "learn":
            say(f"decayed {len(memory.decay())}")
        waiting = len(memory.find(status="proposed"))
        say(f"proposed, waiting for a moderator {waiting}  (factnote memory list --proposed)")


@app.command("list")
def list_items(
    ctx: typer.Context,
    text: str = typer.Argument("", help="Only items whose trigger or strategy contain this."),
    proposed: bool = typer.Option(
        False, "--proposed", help="Only items waiting for a moderator's approval."
    ),
    status: str = typer.Option(
        "", "--status", help="Only items of this status: proposed, approved, rejected, refused."
    ),
) -> None:
    """The items, newest first, as JSON lines with their status and source episodes."""
    from pipeline.learning.memory import STATUSES

    wanted = "proposed" if proposed else status
    if wanted and wanted not in STATUSES:
        fail(f"--status must be one of: {', '.join(STATUSES)}", code=2)
    with _memory(ctx) as memory:
        for item in memory.find(text, status=wanted):
            say(item.model_dump_json())


def _decide(ctx: typer.Context, item_id: str, decision: str, actor: str, reason: str) -> None:
    from bot.memory.store import DecisionRefused, decide_item
    from bot.moderation import users
    from storage.db import Database

    db = Database(loaded(ctx).database_url)
    try:
        account = users.reviewer(db, actor.strip())
        item = decide_item(db, item_id, decision, account.username, reason)
    except (users.UserError, DecisionRefused) as exc:
        fail(str(exc))
    finally:
        db.dispose()
    say(f"{item.status} {item.id} as {account.username}: {item.phase.value}: {item.trigger}")


@app.command("approve")
def approve(
    ctx: typer.Context,
    item_id: str,
    actor: str = typer.Option(..., "--as", help="The review-app account approving it."),
    reason: str = typer.Option("", "--reason", help="A note kept with the approval."),
) -> None:
    """Let checks use a proposed (or rejected) item from now on."""
    _decide(ctx, item_id, "approve", actor, reason)


@app.command("reject")
def reject(
    ctx: typer.Context,
    item_id: str,
    actor: str = typer.Option(..., "--as", help="The review-app account rejecting it."),
    reason: str = typer.Option("", "--reason", help="Why, kept with the rejection."),
) -> None:
    """Never let checks use an item (kept, with who rejected it and why)."""
    _decide(ctx, item_id, "reject", actor, reason)


def _govern(ctx: typer.Context, item_id: str, action: str) -> None:
    with _memory(ctx) as memory:
        found = (
            memory.delete(item_id)
            if action == "delete"
            else memory.set_disabled(item_id, action == "disable")
        )
    if not found:
        fail(f"no memory item {item_id}")
    say(f"{action}d {item_id}")


@app.command("disable")
def disable(ctx: typer.Context, item_id: str) -> None:
    """Keep an item but never retrieve it."""
    _govern(ctx, item_id, "disable")


@app.command("enable")
def enable(ctx: typer.Context, item_id: str) -> None:
    """Retrieve a disabled item again."""
    _govern(ctx, item_id, "enable")


@app.command("delete")
def delete(ctx: typer.Context, item_id: str) -> None:
    """Delete an item for good."""
    _govern(ctx, item_id, "delete")


@app.command("export")
def export(ctx: typer.Context, out: Path = typer.Option(..., "--out")) -> None:
    """Write every item to a JSON file (for another deployment, explicitly)."""
    with _memory(ctx) as memory:
        items = memory.export_items()
    out.write_text(json.dumps(items, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    say(f"{len(items)} items written to {out}")


@app.command("import")
def import_(ctx: typer.Context, path: Path) -> None:
    """Add items exported from another deployment (merged with near duplicates)."""
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        fail(f"cannot read {path}: {exc}", 2)
    with _memory(ctx) as memory:
        added = memory.import_items(records)
    say(f"{added} items added")
