"""How the app answers what a handler did not: no session (to the login page), a bad CSRF
token (403) and HTTP errors (the error page; plain text under /static/)."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from bot.web import csrf
from bot.web.auth import LoginRequired
from bot.web.context import page, redirect

_TITLES = {403: "Forbidden", 404: "Not found", 405: "Method not allowed"}


async def to_login(request: Request, exc: LoginRequired) -> Response:
    return redirect("/login?" + urlencode({"next": exc.next_path}))


async def csrf_refused(request: Request, exc: csrf.CsrfError) -> Response:
    return page(
        request,
        "error.html",
        403,
        title="Forbidden",
        message="The form's security token is missing or invalid. Reload the page and retry.",
    )


async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
    if request.url.path.startswith("/static/"):
        return PlainTextResponse(str(exc.detail), status_code=exc.status_code)
    return page(
        request,
        "error.html",
        exc.status_code,
        title=_TITLES.get(exc.status_code, "Error"),
        message=str(exc.detail),
    )


def install(app: FastAPI) -> None:
    app.exception_handler(LoginRequired)(to_login)
    app.exception_handler(csrf.CsrfError)(csrf_refused)
    app.exception_handler(StarletteHTTPException)(http_error)
