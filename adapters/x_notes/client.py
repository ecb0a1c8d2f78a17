"""The four Community Notes endpoints on a real `tweepy.Client`, in OAuth 1.0a user context.

`tweepy.Client.request(..., user_auth=True)` signs every call with the bot account's user tokens
(tweepy's `OAuth1UserHandler`); nothing here signs by hand. tweepy always sends to
api.twitter.com, so `base_url` (a loopback fake in tests and the demo) is reached by a transport
adapter that moves each request to it after signing.

Every call first takes one unit of the writer's own request budget (`budget.RequestBudget`);
a 429 becomes `RateLimited` with X's reset time (`adapters.x.budgets.reset_at`). Other answers
become the typed errors of `adapters.x_notes.errors`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import requests
import tweepy
from pydantic import BaseModel, ValidationError
from requests.adapters import HTTPAdapter

from adapters.base import PlatformError, RateLimited
from adapters.x.budgets import reset_at
from adapters.x.client import XCredentials
from adapters.x.errors import describe, status_of
from adapters.x_notes.api import (
    CreatedNote,
    CreateResult,
    EligiblePage,
    EvaluateResult,
    WrittenNote,
    WrittenPage,
)
from adapters.x_notes.budget import RequestBudget
from adapters.x_notes.errors import (
    ALREADY_NOTED,
    DAILY_LIMIT,
    INELIGIBLE,
    AlreadyNoted,
    DailyLimitReached,
    NotEligible,
    matches,
)

TWEEPY_HOST = "https://api.twitter.com"
ELIGIBLE_PATH = "/2/notes/search/posts_eligible_for_notes"
NOTES_PATH = "/2/notes"
WRITTEN_PATH = "/2/notes/search/notes_written"
TWEET_FIELDS = "author_id,created_at,lang,note_tweet,attachments,entities,referenced_tweets"
MEDIA_FIELDS = "type,url,preview_image_url,alt_text"
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class NoteInfo:
    """The `info` of a note, as `POST /2/notes` takes it."""

    text: str
    classification: str
    misleading_tags: tuple[str, ...]
    trustworthy_sources: bool


class _Rebase(HTTPAdapter):
    """Sends tweepy's signed requests to `base_url` instead of api.twitter.com."""

    def __init__(self, base_url: str, timeout_s: float) -> None:
        super().__init__()
        self._base = urlsplit(base_url)
        self._timeout_s = timeout_s

    def send(  # type: ignore[override]
        self, request: requests.PreparedRequest, **kwargs: Any
    ) -> requests.Response:
        parts = urlsplit(request.url or "")
        request.url = urlunsplit(
            (self._base.scheme, self._base.netloc, parts.path, parts.query, parts.fragment)
        )
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = self._timeout_s
        return super().send(request, **kwargs)


class NotesClient:
    def __init__(
        self,
        creds: XCredentials,
        budget: RequestBudget,
        *,
        base_url: str = TWEEPY_HOST,
        evaluate_path: str = "/2/notes/evaluate",
        timeout_s: float = 20.0,
    ) -> None:
        self.api = tweepy.Client(
            consumer_key=creds.consumer_key,
            consumer_secret=creds.consumer_secret,
            access_token=creds.access_token,
            access_token_secret=creds.access_token_secret,
            wait_on_rate_limit=False,
        )
        self.api.session.mount(TWEEPY_HOST, _Rebase(base_url, timeout_s))
        self.budget = budget
        self.evaluate_path = evaluate_path

    def eligible_posts(
        self, *, test_mode: bool, post_selection: str, max_results: int, max_pages: int
    ) -> Iterator[EligiblePage]:
        token: str | None = None
        for _ in range(max_pages):
            params: dict[str, Any] = {
                "test_mode": _flag(test_mode),
                "max_results": max_results,
                "post_selection": post_selection,
                "tweet.fields": TWEET_FIELDS,
                "expansions": "attachments.media_keys,author_id",
                "media.fields": MEDIA_FIELDS,
                "user.fields": "username",
            }
            if token:
                params["pagination_token"] = token
            page = self._call("GET", ELIGIBLE_PATH, EligiblePage.read, params=params)
            yield page
            token = page.meta.next_token
            if not token:
                return

    def evaluate(self, post_id: str, note_text: str) -> float:
        # Exactly these two fields: the endpoint refuses others (AlexMahadevan/cn-bot).
        body = {"note_text": note_text, "post_id": post_id}
        return self._call(
            "POST", self.evaluate_path, EvaluateResult.model_validate, body=body
        ).data.claim_opinion_score

    def create_note(self, post_id: str, info: NoteInfo, *, test_mode: bool) -> CreatedNote:
        body = {
            "test_mode": test_mode,
            "post_id": post_id,
            "info": {
                "text": info.text,
                "classification": info.classification,
                "misleading_tags": list(info.misleading_tags),
                "trustworthy_sources": info.trustworthy_sources,
            },
        }
        return self._call("POST", NOTES_PATH, CreateResult.model_validate, body=body).data

    def notes_written(self, *, test_mode: bool, max_pages: int = 5) -> Iterator[WrittenNote]:
        token: str | None = None
        for _ in range(max_pages):
            params: dict[str, Any] = {"test_mode": _flag(test_mode), "max_results": 100}
            if token:
                params["pagination_token"] = token
            page = self._call("GET", WRITTEN_PATH, WrittenPage.model_validate, params=params)
            yield from page.data
            token = page.meta.next_token
            if not token:
                return

    def _call(
        self,
        method: str,
        route: str,
        read: Callable[[Any], M],
        *,
        params: dict[str, Any] | None = None,
        body: dict[str, Any] | None = None,
    ) -> M:
        what = f"{method} {route}"
        self.budget.take(what)
        try:
            response = self.api.request(method, route, params=params, json=body, user_auth=True)
        except tweepy.TooManyRequests as exc:
            if matches(_problem(exc), DAILY_LIMIT):
                raise DailyLimitReached(f"X notes {what}: {describe(exc)}") from exc
            reset = reset_at(exc.response.headers)
            raise RateLimited(
                f"X notes {what}: rate limited until {reset}", reset_at=reset
            ) from exc
        except tweepy.TwitterServerError as exc:
            raise PlatformError(
                f"X notes {what}: {describe(exc)}", retryable=True, status=status_of(exc)
            ) from exc
        except tweepy.NotFound as exc:
            raise NotEligible(f"X notes {what}: {describe(exc)}") from exc
        except tweepy.HTTPException as exc:
            problem = _problem(exc)
            if matches(problem, ALREADY_NOTED):
                raise AlreadyNoted(f"X notes {what}: {describe(exc)}") from exc
            if matches(problem, DAILY_LIMIT):
                raise DailyLimitReached(f"X notes {what}: {describe(exc)}") from exc
            if matches(problem, INELIGIBLE):
                raise NotEligible(f"X notes {what}: {describe(exc)}", status_of(exc)) from exc
            raise PlatformError(
                f"X notes {what}: {describe(exc)}", retryable=False, status=status_of(exc)
            ) from exc
        except (requests.ConnectionError, requests.Timeout) as exc:
            raise PlatformError(f"X notes {what}: {describe(exc)}", retryable=True) from exc
        try:
            return read(response.json())
        except (ValidationError, ValueError) as exc:
            # A shape we cannot read is a platform change, not "nothing there".
            raise PlatformError(
                f"X notes {what}: unexpected response shape: {exc}", retryable=False
            ) from exc


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _problem(exc: tweepy.HTTPException) -> str:
    parts = [str(exc)]
    try:
        parts.append(json.dumps(exc.response.json()))
    except ValueError:
        parts.append(exc.response.text or "")
    return " ".join(parts)
