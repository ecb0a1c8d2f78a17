"""The moderator review app: queue, item pages with actions, the decisions log, admin
settings and users, `/healthz` and `/metrics`. Server-rendered with Jinja2 (auto-escaped).

Every page but `/login`, `/healthz`, `/metrics` and the stylesheet needs a session; every POST
needs the session's CSRF token. Moderator actions go through `bot.moderation.actions`, which records
who did what and re-runs the guard on edits. Logins are throttled per name and per client address
(`bot.moderation.users.attempt_login`). `/metrics` needs `Authorization: Bearer <web.metrics_token>`
when that token is set, and otherwise answers only requests from this machine (loopback).

This module assembles the app: the shared `WebContext` (`bot.web.context`), the middleware,
the error pages (`bot.web.errors`) and one router per area (`bot.web.routes`).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from datetime import datetime

from fastapi import Depends, FastAPI
from fastapi.staticfiles import StaticFiles
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from bot.config import ConfigError, Settings
from bot.moderation import users
from bot.ops.metrics import registry_for
from bot.web import errors
from bot.web.context import HERE, WebContext, build_templates
from bot.web.routes import admin, auth, item, ops, queue
from bot.web.routes import images as image_routes
from bot.web.routes import memory as memory_routes
from bot.web.security import (
    SchemeAwareSessions,
    UntrustedRelayWarning,
    proxy_warnings,
    security_headers,
)
from pipeline.records import utcnow
from storage.db import Database

log = logging.getLogger(__name__)

SESSION_COOKIE = "factnote_session"
SESSION_MAX_AGE_S = 12 * 3600


# Whoever holds one session cookie can try candidate secrets offline against its HMAC, so a
# short secret is found (issue 33: FACTNOTE_WEB_SECRET=a signed a forged admin cookie). 32
# bytes is what `secrets.token_urlsafe(32)` draws.
MIN_SECRET_BYTES = 32


def _secret(configured: str) -> str:
    if configured:
        if len(configured.encode()) < MIN_SECRET_BYTES:
            raise ConfigError(
                f"FACTNOTE_WEB_SECRET is shorter than {MIN_SECRET_BYTES} bytes, so a session "
                "cookie could be forged; make one with: "
                "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
            )
        return configured
    log.warning(
        "FACTNOTE_WEB_SECRET is not set: using a random session secret, so sessions end when "
        "this process stops and are not shared between processes"
    )
    return secrets.token_urlsafe(48)


def create_app(
    settings: Settings,
    db: Database,
    *,
    secret: str | None = None,
    secure_cookies: bool | None = None,
    clock: Callable[[], datetime] = utcnow,
) -> FastAPI:
    """The review app over `db`, configured by `settings.web` (`bot.config.WebConfig`).
    `secret` signs session cookies (default: the configured web secret, else random per
    process); `secure_cookies` marks them Secure always (True) or never (False), overriding the
    setting, whose default is: when the request came over HTTPS. `clock` is the time the login
    throttle goes by."""
    web = settings.web
    ctx = WebContext(
        settings=settings,
        db=db,
        templates=build_templates(),
        metrics=registry_for(db),
        clock=clock,
        login_policy=users.LoginPolicy.from_config(web),
        metrics_token=web.metrics_token.get_secret_value() if web.metrics_token else "",
        proxies=tuple(h.strip() for h in web.trusted_proxies if h.strip()),
    )
    app = FastAPI(
        title="factnote review",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        dependencies=[Depends(errors.no_numbers_past_64_bits)],
    )
    app.state.web = ctx
    app.state.db = db  # what `bot.web.auth` reads the signed-in account from

    app.middleware("http")(security_headers)
    app.add_middleware(
        SchemeAwareSessions,
        secure=web.secure_cookies if secure_cookies is None else secure_cookies,
        secret_key=secret or _secret(web.secret.get_secret_value() if web.secret else ""),
        session_cookie=SESSION_COOKIE,
        max_age=SESSION_MAX_AGE_S,
        same_site="lax",
    )
    for warning in proxy_warnings(ctx.proxies):
        log.warning("%s", warning)
    if ctx.proxies:
        # Outermost, so the sessions and every handler see the real client and scheme.
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=list(ctx.proxies))
    # Outside even that: it must see the address the connection came from.
    app.add_middleware(UntrustedRelayWarning, proxies=ctx.proxies)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    errors.install(app)
    for area in (ops, auth, queue, item, admin):
        app.include_router(area.router)
    app.include_router(memory_routes.router)
    app.include_router(image_routes.router)
    return app
