"""Who is asking: the signed session cookie, login and logout, and the role checks.

The cookie (Starlette's SessionMiddleware, itsdangerous-signed) holds the user id and the
user's session version. Every request re-reads the user, so a disabled account or a logout
(which bumps the version) ends its sessions at once even though old cookies still verify.
"""

from __future__ import annotations

from fastapi import Depends, HTTPException, Request

from bot.moderation import users
from bot.moderation.users import Account
from bot.web import csrf
from storage.db import Database

_USER = "uid"
_VERSION = "ver"


class LoginRequired(Exception):
    """No valid session: the handler redirects to the login page."""

    def __init__(self, next_path: str) -> None:
        super().__init__(next_path)
        self.next_path = next_path


def database(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


def session_account(request: Request) -> Account | None:
    uid = request.session.get(_USER)
    if not isinstance(uid, int):
        return None
    account = users.get_user(database(request), uid)
    if (
        account is None
        or not account.active
        or account.session_version != request.session.get(_VERSION)
    ):
        request.session.pop(_USER, None)
        request.session.pop(_VERSION, None)
        return None
    return account


def require_user(request: Request) -> Account:
    account = session_account(request)
    if account is None:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise LoginRequired(target if request.method == "GET" else "/")
    request.state.account = account
    return account


def require_admin(account: Account = Depends(require_user)) -> Account:
    if not account.is_admin:
        raise HTTPException(status_code=403, detail="Admins only.")
    return account


def log_in(request: Request, account: Account) -> None:
    """Start a fresh session: nothing from the anonymous session carries over."""
    request.session.clear()
    request.session[_USER] = account.id
    request.session[_VERSION] = account.session_version
    csrf.rotate(request)


def log_out(request: Request) -> None:
    uid = request.session.get(_USER)
    if isinstance(uid, int):
        users.end_sessions(database(request), uid)
    request.session.clear()


def safe_next(value: str | None) -> str:
    """Only local paths: a login link must not bounce the user to another site."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/"
    return value
