"""The four Community Notes endpoints on a real `tweepy.Client`, in OAuth 1.0a user context.

`tweepy.Client.request(..., user_auth=True)` signs every call with the bot account's user tokens
(tweepy's `OAuth1UserHandler`); nothing here signs by hand. tweepy always sends to
api.twitter.com, so `base_url` (a loopback fake in tests and the demo) is reached by a transport
adapter that moves each request to it after signing.

Every call first takes one unit of the writer's own request budget (`budget.RequestBudget`);
a 429 becomes `RateLimited` with X's reset time (`adapters.x.budgets.reset_at`). Other answers
become the typed errors of `adapters.x_notes.errors`.

X's two published OpenAPI specs (2.159 and 2.167, `xdevplatform/xdk`) disagree on the evaluate
path and the feed's parameter names, and the live API may answer either, so both are spoken
(docs/platforms.md says why 2.167 goes first): evaluate tries its first path and on a 404 the
other; the feed asks in 2.167's names (`post.fields`, the only ones that can ask for
`note_request_suggestions` and `matched_media_notes`) and on a 400 in 2.159's. Whichever
answered is remembered for the life of the client. An evaluate 404 is never "not eligible".
"""

from __future__ import annotations

import json
import re
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
EVALUATE_PATHS = ("/2/notes/evaluate", "/2/evaluate_note")  # spec 2.167, spec 2.159
# `duration_ms` and `variants` choose a video's file (adapters.x.video).
MEDIA_FIELDS = "type,url,preview_image_url,alt_text,duration_ms,variants"
# The feed's fields and expansions in each spec's names, the quoted post (and its media)
# expanded so a quote is judged with what it quotes.
FEED_PARAMS: dict[str, dict[str, str]] = {
    "2.167": {
        "post.fields": "created_at,lang,note_post,attachments,entities,note_request_suggestions,"
        "matched_media_notes,suggested_source_links",
        "expansions": "attachments.media_keys,author_id,referenced_posts",
    },
    "2.159": {
        "tweet.fields": "author_id,created_at,lang,note_tweet,attachments,entities,"
        "referenced_tweets,suggested_source_links",
        "expansions": "attachments.media_keys,author_id,referenced_tweets.id,"
        "referenced_tweets.id.attachments.media_keys",
    },
}
NOTE_TEXT_RE = re.compile(r"https?://\S+")
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
        evaluate_path: str = EVALUATE_PATHS[0],
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
        # The configured path first, then the other spec's; the one that answers goes first.
        self.evaluate_paths = [evaluate_path, *(p for p in EVALUATE_PATHS if p != evaluate_path)]
        self.feed_dialects = list(FEED_PARAMS)

    def eligible_posts(
        self, *, test_mode: bool, post_selection: str, max_results: int, max_pages: int
    ) -> Iterator[EligiblePage]:
        token: str | None = None
        for _ in range(max_pages):
            params: dict[str, Any] = {
                "test_mode": _flag(test_mode),
                "max_results": max_results,
                "post_selection": post_selection,
                "media.fields": MEDIA_FIELDS,
                "user.fields": "username",
            }
            if token:
                params["pagination_token"] = token
            page = self._feed_page(params)
            yield page
            token = page.meta.next_token
            if not token:
                return

    def _feed_page(self, params: dict[str, Any]) -> EligiblePage:
        """One feed page, asked in the first spec's names that X takes (a 400 on them means
        the live API does not know them: the other spec's are tried, and kept if they work)."""
        for dialect in list(self.feed_dialects):
            try:
                page = self._call(
                    "GET", ELIGIBLE_PATH, EligiblePage.read, params=params | FEED_PARAMS[dialect]
                )
            except PlatformError as exc:
                if exc.status != 400 or dialect == self.feed_dialects[-1]:
                    raise
                continue
            _first(self.feed_dialects, dialect)
            return page
        raise AssertionError("unreachable: the last dialect raises")  # pragma: no cover

    def evaluate(self, post_id: str, note_text: str) -> float:
        """The claim_opinion_score of the exact text. A 404 means the path, not the post: the
        other spec's path is tried, and a 404 from both is an error, never "not eligible"."""
        # Exactly these two fields: the endpoint refuses others (AlexMahadevan/cn-bot).
        body = {"note_text": note_text, "post_id": post_id}
        for path in list(self.evaluate_paths):
            try:
                result = self._call("POST", path, EvaluateResult.model_validate, body=body)
            except PlatformError as exc:
                if exc.status != 404:
                    _first(self.evaluate_paths, path)  # the route is there
                    raise
                continue
            _first(self.evaluate_paths, path)
            return result.data.claim_opinion_score
        raise PlatformError(
            f"X notes evaluate: 404 at {' and '.join(self.evaluate_paths)}; the endpoint moved "
            "or the post is gone (not taken as 'not eligible')",
            retryable=False,
            status=404,
        )

    def create_note(self, post_id: str, info: NoteInfo, *, test_mode: bool) -> CreatedNote:
        if not NOTE_TEXT_RE.search(info.text):
            # Both specs' NoteInfo.text pattern: X refuses a note without a full http(s) URL.
            raise PlatformError(
                "X notes: the note has no http(s):// source URL; X refuses it", retryable=False
            )
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
        try:
            return self._call("POST", NOTES_PATH, CreateResult.model_validate, body=body).data
        except PlatformError as exc:
            if exc.status == 404 and type(exc) is PlatformError:
                raise NotEligible(str(exc)) from exc  # the post left the feed
            raise

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


def _first(order: list[str], chosen: str) -> None:
    """Puts `chosen` first in `order` (what X answered to is asked first from now on)."""
    order.remove(chosen)
    order.insert(0, chosen)


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _problem(exc: tweepy.HTTPException) -> str:
    parts = [str(exc)]
    try:
        parts.append(json.dumps(exc.response.json()))
    except ValueError:
        parts.append(exc.response.text or "")
    return " ".join(parts)
