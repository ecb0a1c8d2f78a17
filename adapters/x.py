"""The X (Twitter) adapter: mentions in, replies out, through tweepy's API v2 `Client`.

What the platform allows shapes this module:

* Mentions come from GET /2/users/:id/mentions, which reaches only the newest 800 mentions of
  the account. A bot that is down long enough for more than 800 newer mentions to pile up loses
  the older ones; nothing on the API side can recover them. Each fetch also stops after
  `max_pages` pages (newest first); when a backlog is larger than that, the older remainder is
  skipped and a warning is logged, because the stored `since_id` cannot express a gap.
* Replies go to the mention itself, never to the post it answers: since 2026-02-23 self-serve
  apps may reply only to posts whose author mentioned (or quoted) the bot.
* Only typed mentions are summons. In a thread, X prefixes a reply with the handles of the
  thread's participants (ours included, under one of our replies); `display_text_range` marks
  where the text the author typed begins, and a mention of the bot counts only when it starts
  there or later (X API v2 OpenAPI spec: Tweet.display_text_range, entities.mentions[].start).
* Rate limits are never slept on here: a 429 becomes `RateLimited` with the platform's reset
  time and the runtime schedules around it. `wait_on_rate_limit` stays off because tweepy would
  retry without bound and does nothing for 5xx. Server errors (5xx) and dropped connections are
  retried a few times with a short backoff.
* Every call is made in OAuth 1.0a user context, as the bot (`user_auth=True`): reads of the
  bot's own mentions and timeline are then "owned reads", billed at the lower rate when the bot
  account owns the developer app. The bearer token is not used.
* 403 refusals are told apart: "duplicate content" is `DuplicateReply` (no proof that our reply
  exists); the reply rule and reply settings refusals end that one request (`ReplyForbidden`);
  anything else (token without write permission, app outside a Project, access level) is
  `AccessDenied`: posting stops (`posting_halted`) without burning the queue.
* `find_reply` reads at most `FIND_REPLY_PAGES` pages of the bot's timeline, and reads nothing
  when this process saw X refuse the last attempt to post that reply (nothing was created).
* The API exposes no "automated account" flag on users (the user object has `verified_type`,
  `affiliation`, `subscription_type`, none of which marks bots), so other bots are recognised
  only through the configured `known_bots` handles or ids.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import urlsplit

import requests
import tweepy
from pydantic import BaseModel, Field, ValidationError, model_validator
from requests.adapters import HTTPAdapter

from adapters.base import (
    AccessDenied,
    DuplicateReply,
    FetchResult,
    MediaRef,
    PlatformError,
    RateBudget,
    RateLimited,
    ReplyForbidden,
    ReplyReceipt,
    SocialPost,
    Summons,
    TargetStatus,
    readable_text,
    storable,
    unreadable_summons,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

PERMALINK = "https://x.com/{username}/status/{id}"
# Snowflake ids carry their creation time; used when a response omits `created_at`.
_TWITTER_EPOCH_MS = 1288834974657

MENTION_EXPANSIONS = [
    "author_id",
    "referenced_tweets.id",
    "referenced_tweets.id.author_id",
    "in_reply_to_user_id",
    "attachments.media_keys",
    "referenced_tweets.id.attachments.media_keys",
]
TWEET_FIELDS = [
    "created_at",
    "display_text_range",
    "author_id",
    "conversation_id",
    "in_reply_to_user_id",
    "referenced_tweets",
    "attachments",
    "entities",
    "lang",
    "note_tweet",
    "withheld",
]
MEDIA_FIELDS = ["url", "preview_image_url", "alt_text", "type"]
FIND_REPLY_PAGES = 2
# Refusals of one reply (X API v2 POST /2/tweets 403 details): the reply rule of 2026-02-23
# ("you have not been mentioned or otherwise engaged by the author"), reply settings, and a
# parent that is gone or hidden from us. They end that request; no other 403 does.
_REPLY_REFUSALS = (
    "reply to this conversation is not allowed",
    "not been mentioned or otherwise engaged",
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
# Nothing in the v2 user object identifies automated accounts, so only the handle is asked for.
USER_FIELDS = ["username"]
TIMELINE_EXPANSIONS = [
    "author_id",
    "referenced_tweets.id",
    "referenced_tweets.id.author_id",
    "attachments.media_keys",
]

_ENV = {
    "bearer_token": "FACTNOTE_X_BEARER_TOKEN",
    "consumer_key": "FACTNOTE_X_CONSUMER_KEY",
    "consumer_secret": "FACTNOTE_X_CONSUMER_SECRET",
    "access_token": "FACTNOTE_X_ACCESS_TOKEN",
    "access_token_secret": "FACTNOTE_X_ACCESS_TOKEN_SECRET",
    "bot_user_id": "FACTNOTE_X_BOT_USER_ID",
    "bot_username": "FACTNOTE_X_BOT_USERNAME",
}


class XCredentialsError(ValueError):
    """The X credentials are incomplete. The message names variables, never values."""


@dataclass(frozen=True)
class XCredentials:
    """Keys for the bot's X app and account. Secrets are kept out of `repr`."""

    bearer_token: str = field(repr=False)
    consumer_key: str = field(repr=False)
    consumer_secret: str = field(repr=False)
    access_token: str = field(repr=False)
    access_token_secret: str = field(repr=False)
    bot_user_id: str
    bot_username: str

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> XCredentials:
        values = {attr: (env.get(var) or "").strip() for attr, var in _ENV.items()}
        missing = [_ENV[attr] for attr, value in values.items() if not value]
        if missing:
            raise XCredentialsError(
                "X credentials incomplete; set these environment variables: " + ", ".join(missing)
            )
        values["bot_username"] = values["bot_username"].lstrip("@")
        if not values["bot_user_id"].isdigit():
            raise XCredentialsError("FACTNOTE_X_BOT_USER_ID must be the numeric user id")
        return cls(**values)


# --- The API's JSON, as far as this adapter reads it --------------------------------------------


class _Model(BaseModel):
    model_config = {"extra": "ignore"}


class _UrlEntity(_Model):
    expanded_url: str | None = None
    url: str | None = None
    media_key: str | None = None


class _Mention(_Model):
    start: int
    end: int
    username: str = ""
    id: str | None = None


class _Entities(_Model):
    urls: list[_UrlEntity] = Field(default_factory=list)
    mentions: list[_Mention] = Field(default_factory=list)


class _NoteTweet(_Model):
    text: str
    entities: _Entities | None = None


class _Reference(_Model):
    type: str
    id: str


class _Attachments(_Model):
    media_keys: list[str] = Field(default_factory=list)


class _Withheld(_Model):
    copyright: bool = False
    country_codes: list[str] = Field(default_factory=list)


class _Tweet(_Model):
    id: str
    text: str = ""
    author_id: str | None = None
    created_at: datetime | None = None
    display_text_range: list[int] | None = None
    conversation_id: str | None = None
    in_reply_to_user_id: str | None = None
    referenced_tweets: list[_Reference] = Field(default_factory=list)
    attachments: _Attachments | None = None
    entities: _Entities | None = None
    lang: str | None = None
    note_tweet: _NoteTweet | None = None
    withheld: _Withheld | None = None

    def reference(self, kind: str) -> str | None:
        return next((ref.id for ref in self.referenced_tweets if ref.type == kind), None)


class _User(_Model):
    id: str
    username: str
    name: str = ""


class _Media(_Model):
    media_key: str
    type: str = "photo"
    url: str | None = None
    preview_image_url: str | None = None
    alt_text: str | None = None


def _problem(exc: ValidationError) -> str:
    """A validation error in one line, without the input (which is untrusted and may be huge)."""
    return storable(
        "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'item'}: {err['msg']}"
            for err in exc.errors(include_url=False, include_input=False)
        )
    )[:300]


def _readable_items(model: type[BaseModel], items: Any) -> tuple[list[Any], dict[str, str]]:
    """The items of a response list that `model` can read, and {id or key: problem} for the
    others: one malformed item must not make the whole page unreadable."""
    if not isinstance(items, list):
        return [], ({"": f"not a list: {type(items).__name__}"} if items is not None else {})
    good: list[Any] = []
    bad: dict[str, str] = {}
    for item in items:
        try:
            good.append(model.model_validate(item))
        except ValidationError as exc:
            key = item.get("id") or item.get("media_key") if isinstance(item, dict) else None
            if not isinstance(key, str | int):
                # No id to key it by: its content, so the same item read again is one request.
                raw = json.dumps(item, sort_keys=True, default=str).encode("utf-8", "replace")
                key = "sha256-" + hashlib.sha256(raw).hexdigest()[:16]
            bad[str(key)] = _problem(exc)
    return good, bad


class _Includes(_Model):
    tweets: list[_Tweet] = Field(default_factory=list)
    users: list[_User] = Field(default_factory=list)
    media: list[_Media] = Field(default_factory=list)
    # Included objects that could not be read, by id or media key: the problem.
    unreadable: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _each_alone(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return {"unreadable": {"includes": f"not an object: {type(data).__name__}"}}
        out: dict[str, Any] = {"unreadable": {}}
        for name, model in (("tweets", _Tweet), ("users", _User), ("media", _Media)):
            out[name], bad = _readable_items(model, data.get(name))
            out["unreadable"].update(bad)
        return out


class _ApiError(_Model):
    """A partial error: something the response could not include, and why."""

    value: str | None = None
    resource_id: str | None = None
    resource_type: str | None = None
    parameter: str | None = None
    title: str = ""
    detail: str = ""
    type: str = ""

    @property
    def subject(self) -> str | None:
        return self.resource_id or self.value


class _Meta(_Model):
    newest_id: str | None = None
    oldest_id: str | None = None
    next_token: str | None = None
    result_count: int | None = None


class _TweetPage(_Model):
    """One page of posts. Each post, included object and partial error is read on its own:
    the ones that cannot be read are kept aside (`unreadable`) instead of failing the page."""

    data: list[_Tweet] = Field(default_factory=list)
    includes: _Includes = Field(default_factory=_Includes)
    errors: list[_ApiError] = Field(default_factory=list)
    meta: _Meta = Field(default_factory=_Meta)
    # Posts in `data` that could not be read: (their id, or "#n" for the n-th, and why).
    unreadable: list[tuple[str, str]] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _each_alone(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        tweets, bad = _readable_items(_Tweet, data.get("data"))
        errors, _ = _readable_items(_ApiError, data.get("errors"))
        try:
            meta = _Meta.model_validate(data.get("meta") or {})
        except ValidationError:
            meta = _Meta()
        return {
            "data": tweets,
            "includes": data.get("includes") or {},
            "errors": errors,
            "meta": meta,
            "unreadable": list(bad.items()),
        }


class _UserLookup(_Model):
    data: _User | None = None
    errors: list[_ApiError] = Field(default_factory=list)


class _Created(_Model):
    id: str


class _CreateResult(_Model):
    data: _Created


def _raw(result: Any) -> dict[str, Any]:
    """The JSON body of a tweepy call, whatever `return_type` the client was built with."""
    if isinstance(result, dict):
        return result
    if isinstance(result, requests.Response):
        body = result.json()
        return body if isinstance(body, dict) else {}
    if isinstance(result, tweepy.Response):

        def plain(obj: Any) -> Any:
            return getattr(obj, "data", obj)

        data = result.data
        return {
            "data": [plain(d) for d in data] if isinstance(data, list) else plain(data),
            "includes": {k: [plain(v) for v in vs] for k, vs in (result.includes or {}).items()},
            "errors": list(result.errors or []),
            "meta": dict(result.meta or {}),
        }
    raise TypeError(f"unexpected tweepy return type {type(result).__name__}")


M = TypeVar("M", bound=BaseModel)


def _parse(model: type[M], result: Any, endpoint: str) -> M:
    try:
        return model.model_validate(_raw(result))
    except ValidationError as exc:
        # A shape we cannot read is a platform change, not "nothing there".
        raise PlatformError(
            f"X {endpoint}: unexpected response shape: {exc}", retryable=False
        ) from exc


# --- Rate-limit bookkeeping ---------------------------------------------------------------------


_NUMERIC_SEGMENT = re.compile(r"/\d+(?=/|$)")
_USERNAME_SEGMENT = re.compile(r"/by/username/[^/]+")


def _endpoint(method: str, url: str) -> str:
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


def _reset_at(headers: Mapping[str, str]) -> datetime | None:
    """When a 429 lifts: the 15-minute window, or the 24-hour cap when that is what ran out."""
    resets = []
    for prefix in ("x-user-limit-24hour", "x-app-limit-24hour"):
        if _int_header(headers, f"{prefix}-remaining") == 0:
            resets.append(_int_header(headers, f"{prefix}-reset"))
    resets.append(_int_header(headers, "x-rate-limit-reset"))
    known = [r for r in resets if r is not None]
    return _epoch(max(known)) if known else None


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


# --- The adapter --------------------------------------------------------------------------------


class XAdapter:
    """`adapters.base.Adapter` for X."""

    name = "x"

    def __init__(
        self,
        creds: XCredentials,
        *,
        client: tweepy.Client | None = None,
        max_results: int = 100,
        max_pages: int = 5,
        server_retries: int = 3,
        sleep: Callable[[float], None] = time.sleep,
        known_bots: Collection[str] = (),
        timeout_s: float = 30.0,
        backoff_s: float = 1.0,
    ) -> None:
        if not 5 <= max_results <= 100:
            raise ValueError("max_results must be between 5 and 100 (the API's bounds)")
        if max_pages < 1 or server_retries < 0:
            raise ValueError("max_pages must be >= 1 and server_retries >= 0")
        self._creds = creds
        self._client = client if client is not None else build_client(creds)
        self._max_results = max_results
        self._max_pages = max_pages
        self._server_retries = server_retries
        self._sleep = sleep
        self._backoff_s = backoff_s
        self._known_bots = {b.lstrip("@").lower() for b in known_bots}
        self._posting_halted: str | None = None
        # Summons whose last post attempt in this process X refused (nothing was created).
        self._refused: set[str] = set()
        self._budgets: dict[str, RateBudget] = {}
        self._lock = threading.Lock()
        session: requests.Session = self._client.session
        session.mount("https://", _DefaultTimeout(timeout_s))
        session.hooks.setdefault("response", []).append(self._record_budget)

    # The Adapter interface --------------------------------------------------------------------

    def fetch_summons(self, cursor: str | None) -> FetchResult:
        """Mentions newer than `cursor`, oldest first; the new cursor is the newest id seen.

        Without a cursor (a first run) only the newest page is read: a fresh deployment does
        not page through an old backlog (the runtime's age limit skips what is old on it). A
        post that cannot be read becomes a recorded, skipped summons and the cursor moves past
        it, so one bad item never fails every later poll."""
        bot_id = self._creds.bot_user_id
        pages = tweepy.Paginator(
            self._client.get_users_mentions,
            bot_id,
            user_auth=True,
            since_id=cursor,
            max_results=self._max_results,
            expansions=MENTION_EXPANSIONS,
            tweet_fields=TWEET_FIELDS,
            media_fields=MEDIA_FIELDS,
            user_fields=USER_FIELDS,
            limit=self._max_pages if cursor is not None else 1,
        )
        summons: list[Summons] = []
        newest: str | None = None
        last: _TweetPage | None = None
        for page in self._pages(pages, "mentions"):
            if newest is None:
                newest = page.meta.newest_id
            for key, problem in page.unreadable:
                log.warning("X mention %s could not be read: %s", key, problem)
                summons.append(_unreadable(key, problem))
            for tweet in page.data:
                try:
                    if self._typed_mention(tweet):
                        summons.append(self._summons(tweet, page))
                    else:
                        log.info("X mention %s: our handle is only in the reply prefix", tweet.id)
                except Exception as exc:  # a shape this code did not foresee: record it
                    log.exception("X mention %s could not be read", tweet.id)
                    summons.append(_unreadable(tweet.id, f"{type(exc).__name__}: {exc}"))
            last = page
        if cursor is not None and last is not None and last.meta.next_token:
            log.warning(
                "X mentions: more than %d pages since %s; older mentions in the gap are skipped",
                self._max_pages,
                cursor,
            )
        if not summons:
            return FetchResult(summons=[], cursor=newest)
        summons.sort(key=lambda s: (not s.id.isdigit(), int(s.id) if s.id.isdigit() else 0))
        ids = [s.id for s in summons if s.id.isdigit()]
        return FetchResult(summons=summons, cursor=newest or (ids[-1] if ids else None))

    def post_reply(self, summons: Summons, text: str, links: Sequence[str] = ()) -> ReplyReceipt:
        """Reply to the mention itself: X lets self-serve apps answer only who summoned them.

        X links URLs in the text itself (the guard finds every URL twitter-text would link),
        so `links` changes nothing here."""
        if summons.platform != self.name:
            raise ValueError(f"summons from {summons.platform!r} given to the X adapter")
        if self._posting_halted is not None:
            raise AccessDenied(f"X posting stopped: {self._posting_halted}", status=403)
        try:
            result = self._call(
                "POST /2/tweets",
                lambda: self._client.create_tweet(
                    text=text, in_reply_to_tweet_id=summons.id, user_auth=True
                ),
                replying=True,
            )
        except (RateLimited, ReplyForbidden, AccessDenied) as exc:
            self._refused.add(summons.id)  # X answered, and created nothing
            if isinstance(exc, AccessDenied):
                self._posting_halted = str(exc)
                log.error("X posting stopped until restart: %s", exc)
            raise
        except PlatformError as exc:
            # A duplicate, a 5xx or a dropped connection: the post may exist.
            self._refused.discard(summons.id)
            if exc.status is not None and 400 <= exc.status < 500 and exc.status != 403:
                self._refused.add(summons.id)
            raise
        self._refused.discard(summons.id)
        created = _parse(_CreateResult, result, "POST /2/tweets").data
        return self._receipt(created.id, None)

    def find_reply(self, summons: Summons) -> ReplyReceipt | None:
        """Our reply to `summons`, searched on the bot's own timeline after the mention.

        The bot's timeline (GET /2/users/:id/tweets) rather than search/recent: search needs a
        Basic or higher tier and sees only seven days, while the timeline is open to every tier
        and reaches the last 3,200 posts. Replies are always newer than the mention, so
        `since_id` bounds the walk; at most `FIND_REPLY_PAGES` pages are read (each read is
        billed). Nothing is read when this process saw X refuse the last attempt to post it.
        """
        if summons.id in self._refused:
            return None
        pages = tweepy.Paginator(
            self._client.get_users_tweets,
            self._creds.bot_user_id,
            user_auth=True,
            since_id=summons.id,
            max_results=self._max_results,
            tweet_fields=["created_at", "referenced_tweets"],
            limit=FIND_REPLY_PAGES,
        )
        for page in self._pages(pages, "bot timeline"):
            for tweet in page.data:
                if tweet.reference("replied_to") == summons.id:
                    return self._receipt(tweet.id, tweet.created_at)
        return None

    def recent_posts(
        self, user: str, *, limit: int = 50, since: datetime | None = None
    ) -> list[SocialPost]:
        """`user`'s own posts (retweets left out), newest first."""
        if limit <= 0:
            return []
        username = user.lstrip("@")
        lookup = _parse(
            _UserLookup,
            self._call(
                "GET /2/users/by/username/:username",
                lambda: self._client.get_user(username=username, user_auth=True),
            ),
            "user lookup",
        )
        if lookup.data is None:
            reason = "; ".join(e.detail for e in lookup.errors) or "no such user"
            raise PlatformError(f"X user @{username}: {reason}", retryable=False, status=404)
        pages = tweepy.Paginator(
            self._client.get_users_tweets,
            lookup.data.id,
            user_auth=True,
            start_time=since,
            exclude=["retweets"],
            max_results=min(100, max(5, limit)),
            expansions=TIMELINE_EXPANSIONS,
            tweet_fields=TWEET_FIELDS,
            media_fields=MEDIA_FIELDS,
            user_fields=USER_FIELDS,
            limit=self._max_pages,
        )
        posts: list[SocialPost] = []
        for page in self._pages(pages, "user timeline"):
            for tweet in page.data:
                posts.append(self._post(tweet, page.includes, fallback_author=lookup.data))
                if len(posts) >= limit:
                    return posts
        return posts

    @property
    def posting_halted(self) -> str | None:
        """Why posting has stopped (a permission or enrolment refusal), or None."""
        return self._posting_halted

    def budgets(self) -> list[RateBudget]:
        with self._lock:
            return sorted(self._budgets.values(), key=lambda b: b.endpoint)

    # Calls, retries, errors --------------------------------------------------------------------

    def _pages(self, paginator: Any, what: str) -> Iterator[_TweetPage]:
        pages = iter(paginator)
        while True:
            # A failed page leaves the iterator's token untouched, so retrying re-asks that page.
            result = self._call(what, lambda: next(pages, None))
            if result is None:
                return
            yield _parse(_TweetPage, result, what)

    def _call(self, what: str, fn: Callable[[], T], *, replying: bool = False) -> T:
        """Run one API call; retry 5xx and dropped connections, map the rest to typed errors.

        Retrying a reply is safe: if the first attempt did land, X refuses the identical text
        as duplicate content, which surfaces as `DuplicateReply`.
        """
        attempt = 0
        while True:
            try:
                return fn()
            except (tweepy.TwitterServerError, requests.ConnectionError, requests.Timeout) as exc:
                if attempt >= self._server_retries:
                    status = _status(exc)
                    raise PlatformError(
                        f"X {what}: server error after {attempt + 1} attempts: {_describe(exc)}",
                        retryable=True,
                        status=status,
                    ) from exc
                self._sleep(self._backoff_s * 2**attempt)
                attempt += 1
            except tweepy.TooManyRequests as exc:
                reset = _reset_at(exc.response.headers)
                raise RateLimited(f"X {what}: rate limited until {reset}", reset_at=reset) from exc
            except tweepy.Forbidden as exc:
                message = _describe(exc)
                problem = _problem_text(exc)
                if any(marker in problem for marker in _ACCESS_MARKERS):
                    raise AccessDenied(
                        f"X {what}: the app or token may not do this: {message}", status=403
                    ) from exc
                if not replying:
                    raise PlatformError(
                        f"X {what}: {message}", retryable=False, status=403
                    ) from exc
                if "duplicate content" in problem:
                    raise DuplicateReply(f"X {what}: {message}") from exc
                if any(refusal in problem for refusal in _REPLY_REFUSALS):
                    raise ReplyForbidden(f"X {what}: {message}", status=403) from exc
                # Not a refusal of this reply: stop posting and let an operator look.
                raise AccessDenied(f"X {what}: unexplained refusal: {message}", status=403) from exc
            except tweepy.HTTPException as exc:
                raise PlatformError(
                    f"X {what}: {_describe(exc)}", retryable=False, status=_status(exc)
                ) from exc

    def _record_budget(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        headers = response.headers
        limit = _int_header(headers, "x-rate-limit-limit")
        remaining = _int_header(headers, "x-rate-limit-remaining")
        reset = _int_header(headers, "x-rate-limit-reset")
        if limit is None and remaining is None and reset is None:
            return
        endpoint = _endpoint(response.request.method or "GET", response.request.url or "")
        budget = RateBudget(
            endpoint=endpoint, limit=limit, remaining=remaining, reset_at=_epoch(reset)
        )
        with self._lock:
            self._budgets[endpoint] = budget

    # Records ----------------------------------------------------------------------------------

    def _receipt(self, tweet_id: str, created_at: datetime | None) -> ReplyReceipt:
        return ReplyReceipt(
            reply_id=tweet_id,
            url=PERMALINK.format(username=self._creds.bot_username, id=tweet_id),
            posted_at=created_at or _snowflake_time(tweet_id),
        )

    def _typed_mention(self, tweet: _Tweet) -> bool:
        """Whether the author typed a mention of the bot, not only X's reply prefix.

        Offsets of `entities.mentions` and `display_text_range` are in the same units of
        `text`; the prefix is handles and spaces, so it reads the same in any unit. A long post's
        `note_tweet` has its own entities, offset by the prefix only if its text repeats it.
        """
        if not tweet.display_text_range:
            return True  # the API did not say where the typed text starts: keep the summons
        typed_from = tweet.display_text_range[0]
        offsets: list[tuple[_Entities | None, int]] = [(tweet.entities, typed_from)]
        if tweet.note_tweet is not None:
            prefix = tweet.text[:typed_from]
            note_from = typed_from if tweet.note_tweet.text.startswith(prefix) else 0
            offsets.append((tweet.note_tweet.entities, note_from))
        ours = [
            (mention, first)
            for entities, first in offsets
            if entities is not None
            for mention in entities.mentions
            if mention.id == self._creds.bot_user_id
            or mention.username.lower() == self._creds.bot_username.lower()
        ]
        if not ours:
            return True  # the entities do not show our handle at all: nothing to judge by
        return any(mention.start >= first for mention, first in ours)

    def _is_bot(self, user_id: str | None, username: str) -> bool:
        if user_id is not None and user_id == self._creds.bot_user_id:
            return True
        return username.lower() in self._known_bots or (user_id or "") in self._known_bots

    def _summons(self, tweet: _Tweet, page: _TweetPage) -> Summons:
        author = _user(page.includes, tweet.author_id)
        username = author.username if author else ""
        parent_id = tweet.reference("replied_to")
        quoted_id = tweet.reference("quoted")
        target_id = quoted_id or parent_id
        target: SocialPost | None
        if target_id is None:
            # The mention carries the claim: its own links and media are the material to check.
            status, reason, target = TargetStatus.SELF, "", self._post(tweet, page.includes)
        else:
            status, reason, target = self._target(target_id, page)
        context = {"conversation_id": tweet.conversation_id} if tweet.conversation_id else {}
        notes: list[str] = []
        return Summons(
            platform=self.name,
            id=tweet.id,
            author=username,
            author_id=tweet.author_id,
            text=readable_text(_full_text(tweet), notes),
            created_at=tweet.created_at or _snowflake_time(tweet.id),
            url=PERMALINK.format(username=username or "i", id=tweet.id),
            parent_id=parent_id,
            quoted_id=quoted_id,
            reply_context=context,
            target=target,
            target_status=status,
            target_reason=reason,
            # in_reply_to_user_id is the parent's author: the mention answers one of our posts.
            replies_to_bot=parent_id is not None
            and tweet.in_reply_to_user_id == self._creds.bot_user_id,
            author_is_bot=self._is_bot(tweet.author_id, username),
            notes=notes,
        )

    def _target(
        self, target_id: str, page: _TweetPage
    ) -> tuple[TargetStatus, str, SocialPost | None]:
        found = next((t for t in page.includes.tweets if t.id == target_id), None)
        if found is not None:
            post = self._post(found, page.includes)
            if found.withheld and (found.withheld.copyright or found.withheld.country_codes):
                where = ", ".join(found.withheld.country_codes) or "copyright"
                return TargetStatus.WITHHELD, f"withheld: {where}", post
            return TargetStatus.OK, "", post
        error = next(
            (
                e
                for e in page.errors
                if e.subject == target_id and e.resource_type in (None, "tweet")
            ),
            None,
        )
        if error is None:
            problem = page.includes.unreadable.get(target_id)
            if problem is not None:
                return TargetStatus.UNAVAILABLE, f"post could not be read: {problem}", None
            return TargetStatus.UNAVAILABLE, "post not included in the response", None
        return _status_for(error), error.detail or error.title or error.type, None

    def _post(
        self, tweet: _Tweet, includes: _Includes, *, fallback_author: _User | None = None
    ) -> SocialPost:
        author = _user(includes, tweet.author_id) or fallback_author
        username = author.username if author else ""
        quoted_id = tweet.reference("quoted")
        quoted = next((t for t in includes.tweets if t.id == quoted_id), None)
        notes: list[str] = []
        if quoted_id is not None and quoted is None and quoted_id in includes.unreadable:
            notes.append(f"quoted post could not be read: {includes.unreadable[quoted_id]}")
        return SocialPost(
            id=tweet.id,
            author=username,
            author_id=tweet.author_id,
            text=readable_text(_full_text(tweet), notes),
            created_at=tweet.created_at or _snowflake_time(tweet.id),
            url=PERMALINK.format(username=username or "i", id=tweet.id),
            lang=tweet.lang,
            links=_links(tweet),
            media=_media(tweet, includes),
            quoted=self._post(quoted, includes) if quoted is not None else None,
            author_is_bot=self._is_bot(tweet.author_id, username),
            notes=notes,
        )


def _status_for(error: _ApiError) -> TargetStatus:
    """Map a partial error to why the post cannot be read.

    X reports protected and blocking authors alike as "not authorized"; only the wording can
    tell a block or a withholding apart, and the API's detail is kept as the reason either way.
    """
    kind = error.type.rsplit("/", 1)[-1]
    words = f"{error.title} {error.detail}".lower()
    if kind == "resource-not-found" or "could not find" in words:
        return TargetStatus.MISSING
    if "withheld" in words:
        return TargetStatus.WITHHELD
    if "block" in words:
        return TargetStatus.BLOCKED
    return TargetStatus.UNAVAILABLE


def _user(includes: _Includes, user_id: str | None) -> _User | None:
    return next((u for u in includes.users if u.id == user_id), None) if user_id else None


def _full_text(tweet: _Tweet) -> str:
    # Long posts are truncated in `text`; the whole of it lives in `note_tweet`.
    return tweet.note_tweet.text if tweet.note_tweet else tweet.text


def _links(tweet: _Tweet) -> list[str]:
    entities = tweet.note_tweet.entities if tweet.note_tweet else None
    entities = entities or tweet.entities
    if entities is None:
        return []
    quoted_id = tweet.reference("quoted")
    links: list[str] = []
    for entity in entities.urls:
        link = entity.expanded_url or entity.url
        # Media and the quoted post's permalink are carried as media and `quoted`, not links.
        if not link or entity.media_key or (quoted_id and link.endswith(f"/status/{quoted_id}")):
            continue
        if link not in links:
            links.append(link)
    return links


def _media(tweet: _Tweet, includes: _Includes) -> list[MediaRef]:
    """Each attachment, readable or not: a photo by its URL, a video or GIF by its preview
    image (kind "video" / "animated_gif": recorded, not analysed), and one that the response
    does not include or gives no URL for, with a note instead of being dropped."""
    if tweet.attachments is None:
        return []
    by_key = {m.media_key: m for m in includes.media}
    refs = []
    for key in tweet.attachments.media_keys:
        item = by_key.get(key)
        if item is None:
            problem = includes.unreadable.get(key, "not included in the response")
            refs.append(MediaRef(url="", kind="unsupported", note=f"media {key}: {problem}"))
            continue
        url = item.url or item.preview_image_url
        note = None if url else f"media {key}: no URL in the response"
        refs.append(MediaRef(url=url or "", alt_text=item.alt_text, kind=item.type, note=note))
    return refs


def _unreadable(key: str, problem: str) -> Summons:
    """A mention that could not be read, keyed by its id when it has a usable one."""
    ident = key if key.isdigit() else f"malformed:x:{storable(key)[:40]}"
    when = _snowflake_time(key) if key.isdigit() else datetime.now(UTC)
    return unreadable_summons("x", ident, problem, created_at=when)


def _snowflake_time(tweet_id: str) -> datetime:
    return datetime.fromtimestamp(((int(tweet_id) >> 22) + _TWITTER_EPOCH_MS) / 1000, UTC)


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


def _status(exc: Exception) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None)


def _describe(exc: Exception) -> str:
    if isinstance(exc, tweepy.HTTPException):
        return str(exc).replace("\n", " ")
    return f"{type(exc).__name__}: {exc}"
