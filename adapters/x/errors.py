"""tweepy failures as the typed errors of `adapters.base`.

* Rate limits are never slept on: a 429 becomes `RateLimited` with the platform's reset time
  and the runtime schedules around it. Server errors (5xx) and dropped connections are retried
  by the client (`adapters.x.client`) before they become a retryable `PlatformError`.
* 403 refusals are told apart: "duplicate content" is `DuplicateReply` (no proof that our reply
  exists); the reply rule and reply settings refusals end that one request (`ReplyForbidden`);
  anything else (token without write permission, app outside a Project, access level) is
  `AccessDenied`: posting stops (`posting_halted`) without burning the queue.
"""

from __future__ import annotations

import tweepy

from adapters.base import AccessDenied, DuplicateReply, PlatformError, ReplyForbidden

# The reply rule of 2026-02-23 for self-serve apps, in both wordings X has sent: "you have not
# been mentioned or otherwise engaged by the author" and "you can only reply to or quote posts
# where you are mentioned".
REPLY_RULE = (
    "not been mentioned or otherwise engaged",
    "reply to or quote posts where you are mentioned",
)
# Refusals of one reply (X API v2 POST /2/tweets 403 details): the reply rule, reply settings,
# and a parent that is gone or hidden from us. They end that request; no other 403 does.
_REPLY_REFUSALS = (
    *REPLY_RULE,
    "reply to this conversation is not allowed",
    "deleted or not visible to you",
    "reply_settings",
    "reply settings",
)
# Problem types / words of permission and enrolment errors (the API's `type`, `reason`,
# `required_enrollment`, `title`/`detail`; v1.1-style code 453 for the access level).
_ACCESS_MARKERS = (
    "client-forbidden",
    "client-not-enrolled",
    "oauth1-permissions",
    "unsupported-authentication",
    "attached to a project",
    "oauth1 app permissions",
    "appropriate level of api access",
    "subset of x api",
    "subset of twitter api",
)


def forbidden(exc: tweepy.Forbidden, what: str, *, replying: bool) -> PlatformError:
    """The typed error of a 403: an access problem, or (when replying) a refusal of the reply."""
    message = describe(exc)
    problem = _problem_text(exc)
    if any(marker in problem for marker in _ACCESS_MARKERS):
        return AccessDenied(f"X {what}: the app or token may not do this: {message}", status=403)
    if not replying:
        return PlatformError(f"X {what}: {message}", retryable=False, status=403)
    if "duplicate content" in problem:
        return DuplicateReply(f"X {what}: {message}")
    if any(refusal in problem for refusal in _REPLY_REFUSALS):
        return ReplyForbidden(f"X {what}: {message}", status=403)
    # Not a refusal of this reply: stop posting and let an operator look.
    return AccessDenied(f"X {what}: unexplained refusal: {message}", status=403)


def is_reply_rule(error: Exception) -> bool:
    """Whether a refusal cites the reply rule (not reply settings or a vanished parent)."""
    text = str(error).lower()
    return any(marker in text for marker in REPLY_RULE)


def _problem_text(exc: tweepy.HTTPException) -> str:
    """The error body's words that say why (type, title, detail, reason, codes), lower-cased."""
    parts = [str(exc)]
    try:
        body = exc.response.json()
    except (ValueError, AttributeError):
        body = None
    if isinstance(body, dict):
        parts += [str(body.get(k, "")) for k in ("type", "title", "detail", "reason")]
        parts.append(str(body.get("required_enrollment", "")))
    parts += [str(e) for e in exc.api_errors]
    if 453 in exc.api_codes:
        parts.append("appropriate level of api access")
    return " ".join(parts).lower()


def status_of(exc: Exception) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None)


def describe(exc: Exception) -> str:
    if isinstance(exc, tweepy.HTTPException):
        return str(exc).replace("\n", " ")
    return f"{type(exc).__name__}: {exc}"
