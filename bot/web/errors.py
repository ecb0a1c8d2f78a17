"""How the app answers what a handler did not: no session (to the login page), a bad CSRF
token (403) and HTTP errors (the error page; plain text under /static/)."""

from __future__ import annotations

import re
import typing
from urllib.parse import urlencode

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import PlainTextResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from bot.web import csrf
from bot.web.auth import LoginRequired
from bot.web.context import page, redirect

_TITLES = {403: "Forbidden", 404: "Not found", 405: "Method not allowed"}
_INTEGER = re.compile(r"[+-]?[0-9]+")
_INT64 = range(-(2**63), 2**63)


def no_numbers_past_64_bits(request: Request) -> None:
    """A dependency of every route: an integer path or query parameter past 64 bits is not
    found, before the handler binds it to a query (SQLite's driver raised OverflowError on it,
    a 500; issue 33). Only parameters the route declares as integers are read: a memory item's
    hex id may be all digits."""
    dependant = getattr(request.scope.get("route"), "dependant", None)
    if dependant is None:
        return
    for field in dependant.path_params:
        if _integer(field.field_info.annotation):
            refuse_past_64_bits(str(request.path_params.get(field.name, "")))
    for field in dependant.query_params:
        if _integer(field.field_info.annotation):
            for value in request.query_params.getlist(field.alias):
                refuse_past_64_bits(value)


def _integer(annotation: object) -> bool:
    return annotation is int or int in typing.get_args(annotation)


def refuse_past_64_bits(value: str) -> None:
    text = value.strip()
    if _INTEGER.fullmatch(text) and (len(text.lstrip("+-")) > 19 or int(text) not in _INT64):
        raise HTTPException(404, "Not found.")


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
