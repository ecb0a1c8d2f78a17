"""`factnote config check`: the settings in force, each with where it came from."""

from __future__ import annotations

from pathlib import Path

import typer

from bot.cli import CONFIG_KEY
from bot.commands.output import say
from bot.commands.settings import loaded
from bot.config import FLAT_ENV, environment, read_toml
from bot.config_check import effective_settings

app = typer.Typer(help="The settings: check a config file and show what is in force.")


@app.command("check")
def check_command(
    ctx: typer.Context,
    changed: bool = typer.Option(
        False, "--changed", help="Only the settings that are not at their default."
    ),
) -> None:
    """Print every setting in force with its source (default, file:line, environment
    variable); secrets show only whether they are set. A config file with a mistake is
    refused before this runs, one line per mistake."""
    settings = loaded(ctx)
    raw = ctx.meta.get(CONFIG_KEY) or environment().get("FACTNOTE_CONFIG")
    config = None
    if raw:
        path = Path(raw)
        text, data = read_toml(path)
        config = (path, text, data)
    for row in effective_settings(settings, environment(), FLAT_ENV, config):
        if changed and row.source == "default":
            continue
        say(f"{row.setting} = {row.value}  # {row.source}")
