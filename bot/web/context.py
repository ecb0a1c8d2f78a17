"""What every route shares: the app's `WebContext` (stored on `app.state.web`), the page,
flash and redirect helpers, and the dependencies routes declare: `Ctx` (the context),
`User`/`Admin` (the account, else to the login page or 403), `Moderator`/`AdminCaller` (all three
as one `Caller`) and `protect_posts` (the CSRF check every router runs on its POSTs)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import jinja2
from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates
from prometheus_client import CollectorRegistry

from bot import overrides
from bot.config import Settings
from bot.moderation import users
from bot.moderation.actions import Reviewer
from bot.moderation.users import Account
from bot.web import csrf
from bot.web.auth import require_admin, require_user
from bot.web.render import contains_quote, day, highlight, safe_href, when, word_diff
from storage.db import Database

HERE = Path(__file__).resolve().parent
_FLASH = "flash"


def build_templates() -> Jinja2Templates:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # every template: post text, quotes and pages are untrusted
        undefined=jinja2.StrictUndefined,
    )
    env.filters.update(when=when, day=day, href=safe_href, highlight=highlight)
    env.globals.update(contains_quote=contains_quote, word_diff=word_diff)
    return Jinja2Templates(env=env)


@dataclass(frozen=True)
class WebContext:
    """The app's collaborators, built once by `create_app`. `clock` is the time the login
    throttle goes by; `proxies` the trusted reverse proxies (empty: none)."""

    settings: Settings
    db: Database
    templates: Jinja2Templates
    metrics: CollectorRegistry
    clock: Callable[[], datetime]
    login_policy: users.LoginPolicy
    metrics_token: str
    proxies: tuple[str, ...]

    def effective(self) -> Settings:
        """The loaded settings with the admins' stored overrides applied."""
        return overrides.apply_overrides(self.settings, self.db)


def web_context(request: Request) -> WebContext:
    ctx: WebContext = request.app.state.web
    return ctx


async def protect_posts(request: Request) -> None:
    """Router dependency: every POST needs the session's CSRF token (checked before login)."""
    if request.method == "POST":
        await csrf.verify_csrf(request)


Ctx = Annotated[WebContext, Depends(web_context)]
User = Annotated[Account, Depends(require_user)]
Admin = Annotated[Account, Depends(require_admin)]


def flash(request: Request, kind: str, message: str) -> None:
    items = list(request.session.get(_FLASH) or [])
    items.append([kind, message[:500]])
    request.session[_FLASH] = items[-5:]  # the cookie has a size limit


def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    account = getattr(request.state, "account", None)
    flashes = request.session.pop(_FLASH, None) or []
    context.update(
        user=account,
        stopped=_stopped(request) if account is not None else [],
        csrf_token=csrf.csrf_token(request),
        csrf_field=csrf.FIELD,
        flashes=flashes,
        nonce=getattr(request.state, "csp_nonce", ""),
    )
    templates = web_context(request).templates
    return templates.TemplateResponse(request, name, context, status_code=status)


def _stopped(request: Request) -> list[str]:
    """What the kill switch stops now, for the banner every signed-in page shows."""
    return overrides.switch_summary(web_context(request).db)


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


@dataclass(frozen=True)
class Caller:
    """A signed-in user's request as a route sees it: the request, the app and the account;
    `db` is the app's database and `name` the account's username (as the action log has it)."""

    request: Request
    ctx: WebContext
    account: Account
    db: Database
    name: str

    @classmethod
    def of(cls, request: Request, ctx: WebContext, account: Account) -> Caller:
        return cls(request, ctx, account, ctx.db, account.username)

    @property
    def who(self) -> Reviewer:
        """The account as `bot.moderation.actions` sees it: its name, and whether it is senior."""
        return Reviewer(self.name, self.account.is_senior)

    def flash(self, kind: str, message: str) -> None:
        flash(self.request, kind, message)

    def page(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        return page(self.request, name, status, **context)


def _moderator(request: Request, ctx: Ctx, account: User) -> Caller:
    return Caller.of(request, ctx, account)


def _admin(request: Request, ctx: Ctx, account: Admin) -> Caller:
    return Caller.of(request, ctx, account)


Moderator = Annotated[Caller, Depends(_moderator)]
AdminCaller = Annotated[Caller, Depends(_admin)]
