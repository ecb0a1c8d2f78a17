"""The connection to X: credentials, the tweepy client, one `call` per request, budgets.

* Every call is made in OAuth 1.0a user context, as the bot (`user_auth=True`): reads of the
  bot's own mentions and timeline are then "owned reads", billed at the lower rate when the bot
  account owns the developer app. The bearer token is not used.
* Rate limits are never slept on here: `wait_on_rate_limit` stays off because tweepy would
  retry without bound and does nothing for 5xx. Server errors (5xx) and dropped connections are
  retried a few times with a short backoff; everything else is a typed error at once
  (`adapters.x.errors`).
* tweepy passes no timeout, so every request gets one; and tweepy logs request headers at DEBUG,
  so the bearer token is redacted from its log records.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import requests
import tweepy
from requests.adapters import HTTPAdapter
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from adapters.base import PlatformError, RateBudget, RateLimited
from adapters.x.api import TweetPage, parse
from adapters.x.budgets import budget_of, reset_at
from adapters.x.errors import describe, forbidden, status_of

T = TypeVar("T")
# What is retried: X's 5xx answers and connections dropped or timed out on the way.
_SERVER_TROUBLE = (tweepy.TwitterServerError, requests.ConnectionError, requests.Timeout)


@dataclass(frozen=True)
class XCredentials:
    """Keys for the bot's X app and account (from `bot.config`'s `[x]` section, which reads
    them from the environment). Secrets are kept out of `repr`."""

    bearer_token: str = field(repr=False)
    consumer_key: str = field(repr=False)
    consumer_secret: str = field(repr=False)
    access_token: str = field(repr=False)
    access_token_secret: str = field(repr=False)
    bot_user_id: str
    bot_username: str


class _DefaultTimeout(HTTPAdapter):
    """tweepy passes no timeout, and a request without one can hang a job forever."""

    def __init__(self, timeout: float) -> None:
        super().__init__()
        self._timeout = timeout

    def send(  # type: ignore[override]
        self, request: requests.PreparedRequest, **kwargs: Any
    ) -> requests.Response:
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = self._timeout
        return super().send(request, **kwargs)


class _RedactBearer(logging.Filter):
    """tweepy logs request headers at DEBUG, bearer token included; keep it out of logs."""

    _pattern = re.compile(r"Bearer [^'\"\s,}]+")

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "Bearer " in message:
            record.msg = self._pattern.sub("Bearer [redacted]", message)
            record.args = None
        return True


_tweepy_log = logging.getLogger("tweepy.client")
if not any(isinstance(f, _RedactBearer) for f in _tweepy_log.filters):
    _tweepy_log.addFilter(_RedactBearer())


def build_client(creds: XCredentials) -> tweepy.Client:
    return tweepy.Client(
        bearer_token=creds.bearer_token,
        consumer_key=creds.consumer_key,
        consumer_secret=creds.consumer_secret,
        access_token=creds.access_token,
        access_token_secret=creds.access_token_secret,
        return_type=dict,
        wait_on_rate_limit=False,
    )


class XClient:
    """A tweepy `Client` (`api`) whose calls retry server errors, fail with typed errors, and
    record the rate budgets they see."""

    def __init__(
        self,
        api: tweepy.Client,
        *,
        server_retries: int,
        sleep: Callable[[float], None],
        timeout_s: float,
        backoff_s: float,
    ) -> None:
        self.api = api
        self._server_retries = server_retries
        self._sleep = sleep
        self._backoff_s = backoff_s
        self._budgets: dict[str, RateBudget] = {}
        self._lock = threading.Lock()
        session: requests.Session = api.session
        session.mount("https://", _DefaultTimeout(timeout_s))
        session.hooks.setdefault("response", []).append(self._record_budget)

    def budgets(self) -> list[RateBudget]:
        with self._lock:
            return sorted(self._budgets.values(), key=lambda b: b.endpoint)

    def pages(self, paginator: Any, what: str) -> Iterator[TweetPage]:
        pages = iter(paginator)
        while True:
            # A failed page leaves the iterator's token untouched, so retrying re-asks that page.
            result = self.call(what, lambda: next(pages, None))
            if result is None:
                return
            yield parse(TweetPage, result, what)

    def call(self, what: str, fn: Callable[[], T], *, replying: bool = False) -> T:
        """Run one API call; retry 5xx and dropped connections, map the rest to typed errors.

        Retrying a reply is safe: if the first attempt did land, X refuses the identical text
        as duplicate content, which surfaces as `DuplicateReply`.
        """
        attempts = self._server_retries + 1
        retrying = Retrying(
            retry=retry_if_exception_type(_SERVER_TROUBLE),
            stop=stop_after_attempt(attempts),
            wait=wait_exponential(multiplier=self._backoff_s),
            sleep=self._sleep,
            reraise=True,
        )
        try:
            return retrying(fn)
        except _SERVER_TROUBLE as exc:
            raise PlatformError(
                f"X {what}: server error after {attempts} attempts: {describe(exc)}",
                retryable=True,
                status=status_of(exc),
            ) from exc
        except tweepy.TooManyRequests as exc:
            reset = reset_at(exc.response.headers)
            raise RateLimited(f"X {what}: rate limited until {reset}", reset_at=reset) from exc
        except tweepy.Forbidden as exc:
            raise forbidden(exc, what, replying=replying) from exc
        except tweepy.HTTPException as exc:
            raise PlatformError(
                f"X {what}: {describe(exc)}", retryable=False, status=status_of(exc)
            ) from exc

    def _record_budget(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        budget = budget_of(response)
        if budget is None:
            return
        with self._lock:
            self._budgets[budget.endpoint] = budget
