"""`factnote setup`: one-off account setup on the platforms.

`factnote setup bluesky` logs in (reusing the stored session when it can) and gives the profile
the `bot` self-label that Bluesky asks automated accounts to carry, keeping every other profile
field. Running it again changes nothing.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import typer
from rich.console import Console
from rich.text import Text

from adapters.base import PlatformError
from adapters.bluesky.adapter import BlueskyAdapter
from bot.commands.output import fail
from bot.commands.settings import loaded
from bot.config import ConfigError, bluesky_credentials

app = typer.Typer(help="One-off account setup", no_args_is_help=True)


@app.callback()
def _group() -> None:
    """One-off account setup."""
    # A callback keeps `setup` a group even while it has a single platform command.


_DEFAULT_SESSION = "bluesky.session"


def _default_session_path(ctx: typer.Context) -> Path:
    # The root command puts loaded settings in ctx.obj: use the runtime's own session file, so
    # setup and `factnote run` share one session (createSession is tightly rate-limited).
    root = ctx.find_root().obj
    configured = getattr(getattr(root, "bluesky", None), "session_path", None)
    if isinstance(configured, str) and configured:
        return Path(configured)
    data_dir = getattr(root, "data_dir", None)
    return Path(data_dir if isinstance(data_dir, str) else "data") / _DEFAULT_SESSION


@app.command("bluesky")
def bluesky(
    ctx: typer.Context,
    session_path: Path | None = typer.Option(
        None,
        "--session-path",
        help="Where the Bluesky session string is kept (default: [bluesky] session_path).",
    ),
    json_: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Set the `bot` self-label on the Bluesky profile (credentials from FACTNOTE_BLUESKY_*)."""
    try:
        creds = bluesky_credentials(loaded(ctx).bluesky)
    except ConfigError as exc:
        fail(str(exc), 2)
    adapter = BlueskyAdapter(creds, session_path=session_path or _default_session_path(ctx))
    try:
        result = adapter.ensure_bot_label()
    except PlatformError as exc:
        fail(f"Bluesky setup failed: {exc}")
    if json_:
        typer.echo(json.dumps(asdict(result), ensure_ascii=False, indent=2))
        return
    action = "added the `bot` self-label to" if result.changed else "already labelled `bot`:"
    console = Console(highlight=False)
    # Handles come from the server: print them as plain Text, never as markup.
    console.print(Text(f"{action} {result.handle} ({result.did})"))
    console.print(Text(f"self-labels: {', '.join(result.labels)}"))
