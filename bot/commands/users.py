"""`factnote users`: review-app accounts (passwords from a prompt or stdin, never argv)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal, NoReturn

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from bot.commands.output import fail
from bot.config import Settings
from bot.moderation import users
from pipeline.records import utcnow
from storage.db import Database

app = typer.Typer(help="Review-app accounts: moderators and admins.", no_args_is_help=True)

# `bot.moderation.users.ROLES` as a type, so that help lists the roles and typos are refused by name
# (a test keeps the two equal).
RoleName = Literal["admin", "senior", "moderator"]


def _fail(message: str) -> NoReturn:
    fail(message)


@contextmanager
def _database(ctx: typer.Context) -> Iterator[Database]:
    """The settings' database, disposed of afterwards; a refused account change (`UserError`)
    ends the command with its message."""
    settings: Settings = ctx.obj
    db = Database(settings.database_url)
    try:
        yield db
    except users.UserError as exc:
        _fail(str(exc))
    finally:
        db.dispose()


def _read_password(from_stdin: bool) -> str:
    if from_stdin:
        line = sys.stdin.readline()
        return line[:-1] if line.endswith("\n") else line
    value: str = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    return value


@app.command("add")
def add(
    ctx: typer.Context,
    username: str = typer.Argument(..., help="Login name."),
    role: RoleName = typer.Option(
        ..., "--role", help="What the account may do (senior and admin decide escalated items)."
    ),
    password_stdin: bool = typer.Option(
        False, "--password-stdin", help="Read the password from the first line of stdin."
    ),
) -> None:
    """Add an account. The password is prompted for (or read from stdin), never an argument."""
    password = _read_password(password_stdin)
    with _database(ctx) as db:
        account = users.add_user(db, username, password, role)
    typer.echo(f"added {account.username} ({account.role})")


@app.command("disable")
def disable(ctx: typer.Context, username: str = typer.Argument(...)) -> None:
    """Disable an account: it can no longer log in, and its open sessions end."""
    with _database(ctx) as db:
        users.disable_user(db, username)
    typer.echo(f"disabled {username}")


@app.command("enable")
def enable(ctx: typer.Context, username: str = typer.Argument(...)) -> None:
    """Re-enable a disabled account."""
    with _database(ctx) as db:
        users.enable_user(db, username)
    typer.echo(f"enabled {username}")


@app.command("reset-password")
def reset_password(
    ctx: typer.Context,
    username: str = typer.Argument(..., help="Account whose password to replace."),
    password_stdin: bool = typer.Option(
        False, "--password-stdin", help="Read the new password from the first line of stdin."
    ),
) -> None:
    """Give an account a new password (prompted for, or read from stdin); its open sessions end.
    For an admin to run when a moderator has lost theirs: nothing else can reset one."""
    password = _read_password(password_stdin)
    with _database(ctx) as db:
        users.set_password(db, username, password)
    typer.echo(f"password reset for {username}; their open sessions have ended")


@app.command("unlock")
def unlock(
    ctx: typer.Context,
    username: str | None = typer.Argument(None, help="Account whose login lockout to lift."),
    address: str | None = typer.Option(
        None, "--address", help="Also (or instead) lift the lockout of this client address."
    ),
) -> None:
    """Lift a login lockout (too many failed logins) now, and forget the failures."""
    if not username and not address:
        _fail("give a username, --address, or both")
    with _database(ctx) as db:
        if username:
            had = users.unlock_user(db, username)
            typer.echo(f"unlocked {username}" if had else f"{username} was not locked")
        if address:
            had = users.unlock_address(db, address)
            typer.echo(f"unlocked address {address}" if had else f"{address} was not locked")


@app.command("list")
def list_(ctx: typer.Context, json_: bool = typer.Option(False, "--json")) -> None:
    """Accounts, their roles and whether they are active."""
    with _database(ctx) as db:
        accounts = users.list_users(db)
        now = utcnow()
        locked = {lk.key: lk.until for lk in users.lockouts(db, now) if lk.scope == users.ACCOUNT}
    if json_:
        typer.echo(
            json.dumps(
                [
                    {
                        "username": a.username,
                        "role": a.role,
                        "active": a.active,
                        "last_login_at": a.last_login_at.isoformat() if a.last_login_at else None,
                        "locked_until": (
                            locked[a.username].isoformat() if a.username in locked else None
                        ),
                    }
                    for a in accounts
                ],
                ensure_ascii=False,
                indent=2,
            )
        )
        return
    table = Table("username", "role", "active", "last login", "locked out until")
    for a in accounts:
        last = a.last_login_at.isoformat(timespec="minutes") if a.last_login_at else "-"
        until = locked[a.username].isoformat(timespec="minutes") if a.username in locked else "-"
        table.add_row(Text(a.username), a.role, "yes" if a.active else "no", last, until)
    Console(highlight=False).print(table)
