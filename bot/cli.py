"""The `factnote` command line: one entry point, one sub-command per concern.

Sub-commands are imported only when they run. Importing all of them costs seconds (the pipeline,
the platform SDKs, the web app), which `--help`, `guard` or `sources` should not pay; so the
root group lists each command by name and one-line help from `COMMANDS`, and loads the module
behind a command only when it is the one being run (or its own help is asked for).

Global options (`--config`, `--log-level`, `--log-format`, `--quiet`, `--debug`) are read before
or after the sub-command's name. A user's mistake (a setting, a missing key, a database URL) is
printed as `factnote: error: ...` lines by `LazyGroup.invoke` (bot/errors.py says which are
mistakes), with exit status 2; `--debug` lets the exception through with its traceback.
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import faulthandler
import gc
import importlib
import os
import signal
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal, NoReturn

import typer
from rich.markup import escape

# Typer (0.29) raises the exceptions of the click it vendors, not the installed click's.
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
from typer.core import TyperCommand, TyperGroup
from typer.main import get_command_from_info, get_group
from typer.models import CommandInfo

from bot.config import environment_warnings, load_settings
from bot.errors import user_error
from bot.logs import LogFormat, setup_logging
from bot.progress import set_quiet

LogLevel = Literal["debug", "info", "warning", "error"]
DEBUG_KEY = "factnote.debug"  # in click's ctx.meta: --debug was given
CONFIG_KEY = "factnote.config"  # in click's ctx.meta: the --config file (bot/commands/config.py)
USAGE_EXIT = 2  # a usage or configuration mistake, as click's own usage errors
LOCKED_EXIT = 75  # EX_TEMPFAIL (bot/commands/status.py has the same; this module stays light)
EXIT_CODES = (
    "Exit status: 0 done; 1 a command's own failure (a file that could not be added...); "
    "2 a usage or configuration mistake; 69 `run --once` had a poll or a request fail "
    "technically (see `factnote status`); 75 the database stayed locked by another process "
    "(try again later)."
)


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
    "worker": LazyCommand(
        "bot.commands.worker:worker_command",
        "Run queued checks as a Procrastinate worker (PostgreSQL deployments).",
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
    "db": LazyCommand(
        "bot.commands.db:app",
        "The main database: migrations, moving to another database, old side files.",
    ),
    "eval": LazyCommand(
        "bot.commands.evaluate:app", "Evaluate retrieval and matching on labelled data"
    ),
    "config": LazyCommand(
        "bot.commands.config:app", "The settings: check a config file and show what is in force."
    ),
    "memory": LazyCommand(
        "bot.commands.memory:app",
        "Experience memory: learn, list, approve, reject, disable, delete, export, import.",
    ),
}


def load_command(name: str) -> Any:
    """Imports the module behind `name` and builds its click command."""
    module_name, attribute = COMMANDS[name].target.split(":")
    target: Any = getattr(importlib.import_module(module_name), attribute)
    if isinstance(target, typer.Typer):
        command: Any = get_group(target)
        command.name = name
    else:
        command = get_command_from_info(
            CommandInfo(name=name, callback=target),
            pretty_exceptions_short=True,
            rich_markup_mode=app.rich_markup_mode,
        )
    return tidy_help(command)


def tidy_help(command: Any) -> Any:
    """Help that says what the code means: words in brackets ("its [credibility] section")
    kept, not eaten as rich markup; flags shown without a `<bool>` value they do not take."""
    command.help = escape(command.help) if command.help else command.help
    # The --help option is made on first use from the context's names; made now, it is fixed
    # up like the others (the root's names are the default ones).
    command.get_help_option(SimpleNamespace(help_option_names=["--help"]))
    params = [*command.params, getattr(command, "_help_option", None)]
    for param in params:
        if getattr(param, "help", None):
            param.help = escape(param.help)
        _flag_without_value(param)
    for sub in getattr(command, "commands", {}).values():
        tidy_help(sub)
    return command


def _flag_without_value(param: Any) -> None:
    # Typer shows a flag's type as `<bool>`, as if it took a value; an empty metavar hides it.
    if getattr(param, "is_flag", False) and param.metavar is None:
        param.metavar = ""


GLOBAL_PANEL = "Global options (before or after the command)"


def show_global_options(command: Any, root_params: list[Any]) -> None:
    """List the root's options in the help of `command` and of its sub-commands, in a panel
    of their own. Display only: `hoist_global_options` hands them to the root wherever they
    are typed, so these copies never receive a value."""
    own = {name for param in command.params for name in getattr(param, "opts", ())}
    for param in root_params:
        names = set(getattr(param, "opts", ()))
        if not names & (GLOBAL_VALUE_OPTIONS | GLOBAL_FLAGS) or names & own:
            continue
        shown = copy.copy(param)
        shown.expose_value = False
        shown.envvar = None
        shown.rich_help_panel = GLOBAL_PANEL
        command.params.append(shown)
    for sub in getattr(command, "commands", {}).values():
        show_global_options(sub, root_params)


# Options of the root command that are also read after the sub-command (`factnote run --once
# --config x.toml`), as people type them. Sub-commands do not define these names themselves.
GLOBAL_VALUE_OPTIONS = frozenset({"--config", "--log-level", "--log-format"})
GLOBAL_FLAGS = frozenset({"--debug", "--quiet", "-q", "--verbose", "-v"})


def hoist_global_options(args: list[str]) -> list[str]:
    """`args` with the global options found after the sub-command's name moved before it."""
    at = 0
    while at < len(args) and args[at].startswith("-") and args[at] != "--":
        at += 2 if args[at] in GLOBAL_VALUE_OPTIONS else 1
    if at >= len(args) or args[at] == "--":
        return args
    moved: list[str] = []
    kept: list[str] = []
    rest = args[at + 1 :]
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg == "--":  # everything after it is an argument
            kept.extend(rest[i:])
            break
        if arg.split("=", 1)[0] in GLOBAL_VALUE_OPTIONS and ("=" in arg or i + 1 < len(rest)):
            width = 1 if "=" in arg else 2
            moved.extend(rest[i : i + width])
            i += width
            continue
        (moved if arg in GLOBAL_FLAGS else kept).append(arg)
        i += 1
    return [*args[:at], *moved, args[at], *kept]


def _usage_error(exc: ClickException) -> NoReturn:
    """A usage mistake as the one line every error is: `factnote: error: ...`, with where to
    find help, instead of click's usage block or Typer's box."""
    if isinstance(exc, NoArgsIsHelpError):  # `factnote review` alone: its help, as asked
        raise exc
    message = " ".join(exc.format_message().split())
    context = getattr(exc, "ctx", None)
    if context is not None and isinstance(exc, UsageError):
        message += f" (see: {context.command_path} --help)"
    typer.echo(f"factnote: error: {message}", err=True)
    raise typer.Exit(exc.exit_code)


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
        if name is None:
            return name, None, rest
        command = load_command(name)
        show_global_options(command, self.get_params(ctx))
        return name, command, rest

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, hoist_global_options(list(args)))
        except ClickException as exc:
            _usage_error(exc)

    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)
        for param in params:
            _flag_without_value(param)
        return params

    def invoke(self, ctx: Any) -> Any:
        # A user's mistake (a setting, a missing key, a database that is not there) is one
        # line that says what to fix; the traceback only with --debug.
        try:
            return super().invoke(ctx)
        except ClickException as exc:  # a sub-command's usage error or bad parameter
            if ctx.meta.get(DEBUG_KEY):
                raise
            _usage_error(exc)
        except Exception as exc:
            if ctx.meta.get(DEBUG_KEY):
                raise
            lines = user_error(exc)
            if lines is None:
                raise
            for line in lines:
                typer.echo(f"factnote: error: {line}", err=True)
            raise typer.Exit(USAGE_EXIT) from None


app = typer.Typer(
    name="factnote",
    cls=LazyGroup,
    help="A bot that answers misinformation with cited, guarded evidence.",
    epilog=EXIT_CODES,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        try:
            version = metadata.version("factnote")
        except metadata.PackageNotFoundError:
            version = "unknown (not installed)"
        typer.echo(f"factnote {version}")
        raise typer.Exit()


@app.callback()
def main_options(
    ctx: typer.Context,
    config: Path | None = typer.Option(
        None,
        "--config",
        envvar="FACTNOTE_CONFIG",
        help="TOML config file (also accepted after the sub-command).",
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log at INFO level."),
    log_level: LogLevel | None = typer.Option(
        None,
        "--log-level",
        envvar="FACTNOTE_LOG_LEVEL",
        help="Log level (default: warning, info with --verbose).",
    ),
    log_format: LogFormat = typer.Option(
        "text",
        "--log-format",
        envvar="FACTNOTE_LOG_FORMAT",
        help="text for people, json for log aggregators (one object per line).",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars."),
    debug: bool = typer.Option(
        False, "--debug", help="Show the traceback of a configuration mistake, too."
    ),
    _show_version: bool = typer.Option(
        False, "--version", is_eager=True, callback=_version, help="Print the version and exit."
    ),
) -> None:
    ctx.meta[DEBUG_KEY] = debug
    ctx.meta[CONFIG_KEY] = config
    set_quiet(ctx, quiet)
    setup_logging(log_level or ("info" if verbose else "warning"), log_format)
    for line in environment_warnings():
        typer.echo(f"factnote: warning: {line}", err=True)
    ctx.obj = load_settings(config)  # a mistake in it is reported by LazyGroup.invoke
    # The process's platforms, built here at start-up (not at import, not on first use). Here
    # rather than in `main`, so that `--help` never pays for it; a host that installed its own
    # registry (a test session, a plugin's entry point) keeps it.
    from bot import platforms

    if platforms.installed() is None:
        platforms.install()


def freeze_at_exit() -> None:
    """Spare the interpreter its last full garbage collection when the process ends.

    That collection walks every object still alive (the modules, the settings, a loaded model)
    only to free memory the process returns anyway: 0.50-0.74 s at the end of `factnote check`'s
    start-up, 0.07-0.09 s with them frozen (4 runs each). It runs at exit only, after the
    command's output is written and its transactions are closed; the handlers registered before
    this one (logging's flush) still run, the standard streams are still flushed and reference
    counting still frees what it frees. What is lost is the finalizers of objects left in
    reference cycles, which no command relies on (the runtime disposes of its engine itself)."""
    atexit.register(gc.freeze)


def main() -> None:
    freeze_at_exit()
    # `kill -USR1 <pid>` prints every thread's stack to stderr: how a bot that will not stop
    # (or a worker that seems stuck) shows where it waits, without stopping it.
    # The process's own stderr (fd 2), not `sys.stderr`, which a caller may have replaced.
    with contextlib.suppress(AttributeError, ValueError, OSError):
        faulthandler.register(signal.SIGUSR1, file=2, all_threads=True)
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
        typer.echo(
            "factnote: error: the database is locked by another process; try again later",
            err=True,
        )
        raise SystemExit(LOCKED_EXIT) from None


if __name__ == "__main__":
    main()
