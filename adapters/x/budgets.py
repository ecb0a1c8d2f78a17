"""Rate-limit headers: the budgets `factnote status` shows, and when a 429 lifts."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from urllib.parse import urlsplit

import requests

from adapters.base import RateBudget

_NUMERIC_SEGMENT = re.compile(r"/\d+(?=/|$)")
_USERNAME_SEGMENT = re.compile(r"/by/username/[^/]+")


def endpoint_of(method: str, url: str) -> str:
    """`GET /2/users/:id/mentions` from a concrete request, so budgets group per endpoint."""
    version, _, rest = urlsplit(url).path.lstrip("/").partition("/")
    rest = _USERNAME_SEGMENT.sub("/by/username/:username", f"/{rest}")
    return f"{method.upper()} /{version}{_NUMERIC_SEGMENT.sub('/:id', rest)}"


def _int_header(headers: Mapping[str, str], name: str) -> int | None:
    value = headers.get(name)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _epoch(seconds: int | None) -> datetime | None:
    return datetime.fromtimestamp(seconds, UTC) if seconds is not None else None


def budget_of(response: requests.Response) -> RateBudget | None:
    """The budget a response's `x-rate-limit-*` headers report, None when they report none."""
    headers = response.headers
    limit = _int_header(headers, "x-rate-limit-limit")
    remaining = _int_header(headers, "x-rate-limit-remaining")
    reset = _int_header(headers, "x-rate-limit-reset")
    if limit is None and remaining is None and reset is None:
        return None
    endpoint = endpoint_of(response.request.method or "GET", response.request.url or "")
    return RateBudget(endpoint=endpoint, limit=limit, remaining=remaining, reset_at=_epoch(reset))


def reset_at(headers: Mapping[str, str]) -> datetime | None:
    """When a 429 lifts: the 15-minute window, or the 24-hour cap when that is what ran out."""
    resets = []
    for prefix in ("x-user-limit-24hour", "x-app-limit-24hour"):
        if _int_header(headers, f"{prefix}-remaining") == 0:
            resets.append(_int_header(headers, f"{prefix}-reset"))
    resets.append(_int_header(headers, "x-rate-limit-reset"))
    known = [r for r in resets if r is not None]
    return _epoch(max(known)) if known else None
