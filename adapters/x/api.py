"""The X API v2 JSON, as far as this adapter asks for and reads it.

Each post, included object and partial error of a response is read on its own (`TweetPage`,
`Includes`): the ones that cannot be read are kept aside (`unreadable`, keyed by id or media key,
or by a hash of their content) instead of failing the page, so one malformed item never fails
every later poll. A response whose overall shape cannot be read is a platform change
(`parse` raises `PlatformError`), not "nothing there".
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any, TypeVar

import requests
import tweepy
from pydantic import (
    AliasChoices,
    BaseModel,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from adapters.base import PlatformError, storable

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
# `variants` and `duration_ms` choose a video's file (adapters.x.video; both specs' Media /
# Video: `variants[]` of {bit_rate, content_type, url}).
MEDIA_FIELDS = ["url", "preview_image_url", "alt_text", "type", "duration_ms", "variants"]
# Nothing in the v2 user object identifies automated accounts, so only the handle is asked for.
USER_FIELDS = ["username"]


class _Model(BaseModel):
    model_config = {"extra": "ignore"}


class UrlEntity(_Model):
    expanded_url: str | None = None
    url: str | None = None
    media_key: str | None = None


class Mention(_Model):
    start: int
    end: int
    username: str = ""
    id: str | None = None


class Entities(_Model):
    urls: list[UrlEntity] = Field(default_factory=list)
    mentions: list[Mention] = Field(default_factory=list)


class NoteTweet(_Model):
    text: str
    entities: Entities | None = None


class Reference(_Model):
    type: str
    id: str


class Attachments(_Model):
    media_keys: list[str] = Field(default_factory=list)


class Withheld(_Model):
    copyright: bool = False
    country_codes: list[str] = Field(default_factory=list)


class Tweet(_Model):
    id: str
    text: str = ""
    author_id: str | None = None
    created_at: datetime | None = None
    display_text_range: list[int] | None = None
    conversation_id: str | None = None
    in_reply_to_user_id: str | None = None
    # Spec 2.167 renames these (`referenced_posts`, `note_post`); either is read.
    referenced_tweets: list[Reference] = Field(
        default_factory=list,
        validation_alias=AliasChoices("referenced_tweets", "referenced_posts"),
    )
    attachments: Attachments | None = None
    entities: Entities | None = None
    lang: str | None = None
    note_tweet: NoteTweet | None = Field(
        default=None, validation_alias=AliasChoices("note_tweet", "note_post")
    )
    withheld: Withheld | None = None

    def reference(self, kind: str) -> str | None:
        return next((ref.id for ref in self.referenced_tweets if ref.type == kind), None)


class User(_Model):
    id: str
    username: str
    name: str = ""


class Variant(_Model):
    """One playback variant of a video or GIF (spec 2.159 `Variant`, 2.167 `MediaVariants`
    items: every field optional, `bit_rate` absent for playlists)."""

    bit_rate: int | None = None
    content_type: str | None = None
    url: str | None = None


class Media(_Model):
    media_key: str
    type: str = "photo"
    url: str | None = None
    preview_image_url: str | None = None
    alt_text: str | None = None
    duration_ms: int | None = None
    variants: list[Variant] = Field(default_factory=list)

    @field_validator("variants", mode="before")
    @classmethod
    def _readable_variants(cls, value: Any) -> list[Any]:
        # One variant that cannot be read leaves the others (and the media object) readable.
        return _readable_items(Variant, value)[0]

    @field_validator("duration_ms", mode="before")
    @classmethod
    def _whole_ms(cls, value: Any) -> Any:
        # Only an estimate rests on it: an unreadable duration is an unknown one.
        return value if isinstance(value, int) and not isinstance(value, bool) else None


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


class Includes(_Model):
    tweets: list[Tweet] = Field(default_factory=list)
    users: list[User] = Field(default_factory=list)
    media: list[Media] = Field(default_factory=list)
    # Included objects that could not be read, by id or media key: the problem.
    unreadable: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _each_alone(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return {"unreadable": {"includes": f"not an object: {type(data).__name__}"}}
        out: dict[str, Any] = {"unreadable": {}}
        # Spec 2.167 names the included posts `posts`.
        data = {"tweets": data.get("posts"), **{k: v for k, v in data.items() if k != "posts"}}
        for name, model in (("tweets", Tweet), ("users", User), ("media", Media)):
            out[name], bad = _readable_items(model, data.get(name))
            out["unreadable"].update(bad)
        return out


class ApiError(_Model):
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


class Meta(_Model):
    newest_id: str | None = None
    oldest_id: str | None = None
    next_token: str | None = None
    result_count: int | None = None


class TweetPage(_Model):
    """One page of posts. Each post, included object and partial error is read on its own:
    the ones that cannot be read are kept aside (`unreadable`) instead of failing the page."""

    data: list[Tweet] = Field(default_factory=list)
    includes: Includes = Field(default_factory=Includes)
    errors: list[ApiError] = Field(default_factory=list)
    meta: Meta = Field(default_factory=Meta)
    # Posts in `data` that could not be read: (their id, or "#n" for the n-th, and why).
    unreadable: list[tuple[str, str]] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _each_alone(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        tweets, bad = _readable_items(Tweet, data.get("data"))
        errors, _ = _readable_items(ApiError, data.get("errors"))
        try:
            meta = Meta.model_validate(data.get("meta") or {})
        except ValidationError:
            meta = Meta()
        return {
            "data": tweets,
            "includes": data.get("includes") or {},
            "errors": errors,
            "meta": meta,
            "unreadable": list(bad.items()),
        }


class UserLookup(_Model):
    data: User | None = None
    errors: list[ApiError] = Field(default_factory=list)


class Created(_Model):
    id: str


class CreateResult(_Model):
    data: Created


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


def parse(model: type[M], result: Any, endpoint: str) -> M:
    try:
        return model.model_validate(_raw(result))
    except ValidationError as exc:
        # A shape we cannot read is a platform change, not "nothing there".
        raise PlatformError(
            f"X {endpoint}: unexpected response shape: {exc}", retryable=False
        ) from exc
