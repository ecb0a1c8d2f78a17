"""The `factnote` command line: one entry point, one sub-command per concern."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import typer

from bot.commands import (
    check,
    claims,
    demo,
    evaluate,
    fetch,
    guard,
    index,
    report,
    review,
    run,
    serve,
    setup,
    sources,
    users,
)
from bot.config import ConfigError, load_settings

app = typer.Typer(
    name="factnote",
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


app.command("check")(check.command)
app.command("fetch")(fetch.command)
app.command("guard")(guard.command)
app.add_typer(index.app, name="index")
app.add_typer(sources.app, name="sources")
app.add_typer(review.app, name="review")
app.add_typer(setup.app, name="setup")
app.command("run")(run.run_command)
app.command("status")(run.status_command)
app.command("demo")(demo.command)
app.command("serve")(serve.command)
app.add_typer(users.app, name="users")
app.command("report")(report.report_command)
app.command("export")(report.export_command)
app.add_typer(claims.app, name="claims")
app.add_typer(evaluate.app, name="eval")


def main() -> None:
    # Models are loaded from local packages only; never let a library reach for a hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    app()


if __name__ == "__main__":
    main()
