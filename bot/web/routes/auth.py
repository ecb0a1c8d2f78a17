"""Login and logout. Logins are throttled per name and per client address
(`bot.moderation.users.attempt_login`); every POST needs the session's CSRF token."""

from __future__ import annotations

import math

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse
from starlette.responses import Response

from bot.moderation import users
from bot.web.auth import log_in, log_out, safe_next, session_account
from bot.web.context import Ctx, page, protect_posts, redirect
from bot.web.security import client_address

router = APIRouter(dependencies=[Depends(protect_posts)])


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, next: str = "/") -> Response:
    if session_account(request) is not None:
        return redirect(safe_next(next))
    return page(request, "login.html", next=safe_next(next), error=None, username="")


@router.post("/login")
def login(
    request: Request,
    ctx: Ctx,
    username: str = Form(""),
    password: str = Form(""),
    next: str = Form("/"),
) -> Response:
    result = users.attempt_login(
        ctx.db,
        username.strip(),
        password,
        client_address(request),
        now=ctx.clock(),
        policy=ctx.login_policy,
    )
    account = result.account
    if account is None and result.locked_until is not None:
        # The same for an unknown name: those are counted and locked out too.
        wait_s = max(1, math.ceil((result.locked_until - ctx.clock()).total_seconds()))
        response = page(
            request,
            "login.html",
            429,
            next=safe_next(next),
            error=f"Too many failed logins. Try again in {math.ceil(wait_s / 60)} minute(s).",
            username=username,
        )
        response.headers["Retry-After"] = str(wait_s)
        return response
    if account is None:
        # One message for unknown user, wrong password and disabled account.
        return page(
            request,
            "login.html",
            401,
            next=safe_next(next),
            error="Invalid username or password.",
            username=username,
        )
    log_in(request, account)
    return redirect(safe_next(next))


@router.post("/logout")
def logout(request: Request) -> Response:
    log_out(request)
    return redirect("/login")
