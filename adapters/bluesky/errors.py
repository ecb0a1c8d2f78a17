"""atproto failures as the typed errors of `adapters.base`.

Rate limits are never slept on: a 429 becomes `RateLimited` with the `ratelimit-reset` time.
A session the PDS no longer accepts is told apart (`is_auth_failure`: the client logs in again
once), and so is createSession refusing the credentials themselves (`login_refused`: the client
stops logging in, see `adapters.bluesky.client`).
"""

from __future__ import annotations

from datetime import UTC, datetime

from atproto_client.exceptions import (
    BadRequestError,
    LoginRequiredError,
    RateLimitExceededError,
    RequestErrorBase,
    UnauthorizedError,
)
from atproto_core.exceptions import AtProtocolError

from adapters.base import PlatformError, RateLimited, ReplyForbidden

# Error names the PDS uses for a session it no longer accepts.
_AUTH_ERRORS = frozenset({"ExpiredToken", "InvalidToken", "AuthenticationRequired", "AuthMissing"})
_NOT_FOUND_ERRORS = frozenset({"NotFound", "RecordNotFound"})
# createSession refusing the credentials themselves (lexicon com.atproto.server.createSession
# errors, and the PDS's 401 "Invalid identifier or password").
_LOGIN_REFUSED = frozenset(
    {"AuthenticationRequired", "AccountTakedown", "AuthFactorTokenRequired", "InvalidToken"}
)


class NotFound(PlatformError):
    """The XRPC call named a record or post that does not exist (deleted, or never existed)."""


def _xrpc_error(exc: RequestErrorBase) -> tuple[str, str]:
    content = exc.response.content if exc.response is not None else None
    error = getattr(content, "error", None)
    message = getattr(content, "message", None)
    return str(error or ""), str(message or "")


def is_auth_failure(exc: AtProtocolError) -> bool:
    if isinstance(exc, LoginRequiredError):
        return True
    if not isinstance(exc, RequestErrorBase) or exc.response is None:
        return False
    error, _ = _xrpc_error(exc)
    if isinstance(exc, UnauthorizedError):
        return exc.response.status_code == 401 or error in _AUTH_ERRORS
    return isinstance(exc, BadRequestError) and error in _AUTH_ERRORS


def login_refused(exc: AtProtocolError) -> bool:
    """createSession refused the credentials (not a rate limit, outage or network failure)."""
    if not isinstance(exc, RequestErrorBase) or exc.response is None:
        return False
    error, _ = _xrpc_error(exc)
    return exc.response.status_code in (401, 403) or error in _LOGIN_REFUSED


def translate(exc: AtProtocolError, endpoint: str, *, posting: bool) -> PlatformError:
    """One typed PlatformError for an atproto failure; never sleeps, never hides the cause."""
    if isinstance(exc, RateLimitExceededError):
        return RateLimited(f"Bluesky {endpoint}: rate limited", reset_at=exc.reset_at)
    if not isinstance(exc, RequestErrorBase):
        return PlatformError(f"Bluesky {endpoint}: {type(exc).__name__}: {exc}", retryable=False)
    if exc.response is None:  # transport failure or timeout
        return PlatformError(
            f"Bluesky {endpoint}: network failure ({type(exc).__name__})", retryable=True
        )
    status = exc.response.status_code
    error, message = _xrpc_error(exc)
    detail = f"Bluesky {endpoint}: {status} " + ": ".join(p for p in (error, message[:200]) if p)
    if status == 429:
        reset = int_or_none(exc.response.headers.get("ratelimit-reset"))
        return RateLimited(
            detail, reset_at=datetime.fromtimestamp(reset, tz=UTC) if reset else None
        )
    if status >= 500 or status in (408, 409):
        return PlatformError(detail, retryable=True, status=status)
    if error in _NOT_FOUND_ERRORS:
        return NotFound(detail, retryable=False, status=status)
    if posting and (status == 403 or (status == 400 and _refuses_reply(error, message))):
        return ReplyForbidden(detail, status=status)
    return PlatformError(detail, retryable=False, status=status)


def _refuses_reply(error: str, message: str) -> bool:
    text = f"{error} {message}".lower()
    return any(word in text for word in ("reply", "threadgate", "thread gate", "blocked"))


def int_or_none(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None
