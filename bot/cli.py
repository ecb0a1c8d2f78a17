"""The `factnote` command line: one entry point, one sub-command per concern.

Sub-commands are imported only when they run. Importing all of them costs seconds (the pipeline,
the platform SDKs, the web app), which `--help`, `guard` or `sources` should not pay; so the
root group lists each command by name and one-line help from `COMMANDS`, and loads the module
behind a command only when it is the one being run (or its own help is asked for).
"""

from __future__ import annotations

import importlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup
from typer.main import get_command_from_info, get_group
from typer.models import CommandInfo

from bot.config import ConfigError, load_settings


@dataclass(frozen=True)
class LazyCommand:
    """Where a sub-command lives: `module:attribute`, a function or a `typer.Typer` group."""

    target: str
    help: str  # the command's first help line; a test keeps it equal to the real one


COMMANDS: dict[str, LazyCommand] = {
    "check": LazyCommand(
        "bot.commands.check:command", "Check one post and print the decision (nothing is posted)."
    ),
    "fetch": LazyCommand(
        "bot.commands.fetch:command",
        "Fetch a page with the default fetch settings and print the extracted snapshot.",
    ),
    "guard": LazyCommand(
        "bot.commands.guard:command",
        "Check a draft reply against the guard's hard rules (no evidence/verdict rules here).",
    ),
    "index": LazyCommand("bot.commands.index:app", "The local search index"),
    "sources": LazyCommand("bot.commands.sources:app", "Publisher credibility table"),
    "review": LazyCommand(
        "bot.commands.review:app", "Drafts waiting for a moderator (review mode)."
    ),
    "setup": LazyCommand("bot.commands.setup:app", "One-off account setup"),
    "run": LazyCommand(
        "bot.commands.run:run_command",
        "Run the bot: poll the enabled adapters, check what people ask about, act by mode.",
    ),
    "status": LazyCommand(
        "bot.commands.status:status_command",
        "Queue sizes by state, last poll per adapter, rate-limit budgets, recent errors.",
    ),
    "demo": LazyCommand(
        "bot.commands.demo:command",
        "Run the bot once on the bundled demo (dry-run, local adapter, local index).",
    ),
    "serve": LazyCommand(
        "bot.commands.serve:command",
        "Serve the review queue, item pages, decisions log, admin pages and /metrics.",
    ),
    "users": LazyCommand("bot.commands.users:app", "Review-app accounts: moderators and admins."),
    "report": LazyCommand(
        "bot.commands.report:report_command",
        "Write a self-contained HTML audit report (charts inline) of what the bot did.",
    ),
    "export": LazyCommand(
        "bot.commands.report:export_command",
        "One record per decision with its full trace, evidence and snapshot hashes.",
    ),
    "claims": LazyCommand(
        "bot.commands.claims:app", "Known claims: imported fact-checks and approved answers"
    ),
    "eval": LazyCommand(
        "bot.commands.evaluate:app", "Evaluate retrieval and matching on labelled data"
    ),
}


def load_command(name: str) -> Any:
    """Imports the module behind `name` and builds its click command."""
    module_name, attribute = COMMANDS[name].target.split(":")
    target: Any = getattr(importlib.import_module(module_name), attribute)
    if isinstance(target, typer.Typer):
        group = get_group(target)
        group.name = name
        return group
    return get_command_from_info(
        CommandInfo(name=name, callback=target),
        pretty_exceptions_short=True,
        rich_markup_mode=app.rich_markup_mode,
    )


class LazyGroup(TyperGroup):
    """The root group: lists `COMMANDS` without importing them, loads the one that runs."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        # Used for listing (help, completion): a stand-in carrying the help line is enough.
        entry = COMMANDS.get(cmd_name)
        return None if entry is None else TyperCommand(cmd_name, help=entry.help)

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        # Used to run a command (or show its own help): the real one, imported now.
        name, _, rest = super().resolve_command(ctx, args)
        return name, (load_command(name) if name is not None else None), rest


app = typer.Typer(
    name="factnote",
    cls=LazyGroup,
    help="A bot that answers misinformation with cited, guarded evidence.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.callback()
def main_options(
    ctx: typer.Context,
    config: Path | None = typer.Option(
        None, "--config", envvar="FACTNOTE_CONFIG", help="TOML config file."
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log at INFO level."),
) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        ctx.obj = load_settings(config)
    except ConfigError as exc:
        raise typer.BadParameter(str(exc), param_hint="--config") from exc


def main() -> None:
    # Models are loaded from local packages only; never let a library reach for a hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        app()
    except Exception as exc:
        # Any command (review, users, report...) that meets another process's lock past the
        # busy timeout: one line and "try again later", not a traceback.
        from storage.db import DatabaseBusy, is_lock_error

        if not (isinstance(exc, DatabaseBusy) or is_lock_error(exc)):
            raise
        typer.echo("factnote: the database is locked by another process; try again later", err=True)
        raise SystemExit(75) from None


if __name__ == "__main__":
    main()
