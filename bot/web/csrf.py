"""CSRF protection: one random token per session, sent in a hidden field of every form and
compared in constant time on every POST. A POST without it, or with another, is refused (403).

The session cookie is SameSite=Lax as well; the token is what protects a browser that ignores
SameSite, and the login form itself (login CSRF).
"""

from __future__ import annotations

import hmac
import secrets

from fastapi import Request

FIELD = "csrf_token"
_SESSION_KEY = "csrf"


class CsrfError(Exception):
    """The form's token is missing or does not match the session's."""


def csrf_token(request: Request) -> str:
    """The session's token, created on first use (so an anonymous login form has one)."""
    token = request.session.get(_SESSION_KEY)
    if not isinstance(token, str) or not token:
        token = secrets.token_urlsafe(32)
        request.session[_SESSION_KEY] = token
    return token


def rotate(request: Request) -> None:
    """A fresh token, e.g. after login, so a token seen before authentication is worthless."""
    request.session[_SESSION_KEY] = secrets.token_urlsafe(32)


async def verify_csrf(request: Request) -> None:
    """FastAPI dependency for every POST route."""
    form = await request.form()
    sent = form.get(FIELD)
    expected = request.session.get(_SESSION_KEY)
    if (
        not isinstance(sent, str)
        or not isinstance(expected, str)
        or not expected
        or not hmac.compare_digest(sent.encode(), expected.encode())
    ):
        raise CsrfError()
