"""A loopback fake of the four Community Notes endpoints, for tests and `make notes-demo`.

Shaped after the primary sources (each handler cites its own):
docs.x.com/x-api/community-notes/quickstart (feed, note body, one note per post, OAuth 1.0a
user context), .../evaluate-a-community-note (`{note_text, post_id}` ->
`data.claim_opinion_score`), .../create-community-notes (`{test_mode, post_id, info}` ->
`data.id`), .../search-community-notes-written and twitter/communitynotes
template-api-note-writer (`info.post_id`, `test_result.evaluation_outcome[]` buckets). The
"daily limit" answer and the refusal of non-test calls before admission follow
docs/community-notes.md (Goodheart-Labs/cn-return-bot writingLimit.ts; communitynotes #455).

Both of X's published OpenAPI specs are served (`../shared/specs`, 2.159 and 2.167; the
contract tests hold every exchange to them): the feed answers in the naming its request used
(`tweet.fields`: `note_tweet`, `referenced_tweets`, `includes.tweets`; `post.fields`:
`note_post`, `referenced_posts`, `includes.posts`, and the fields only 2.167 names,
`note_request_suggestions` and `matched_media_notes`), only the fields and expansions asked
for, and evaluate at `/2/evaluate_note` (2.159) and `/2/notes/evaluate` (2.167). `dialects`
limits the fake to one spec, as a live API that knows only one would be. Errors are RFC 7807
problems (`application/problem+json`) of the spec the request spoke.

    with FakeNotesApi(pages=[[post(...), ...], ...]) as api:
        api.base_url          # "http://127.0.0.1:PORT"
        api.calls("POST /2/notes")
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

CLASSIFICATIONS = {"misinformed_or_potentially_misleading", "not_misleading"}
TAGS = {
    "disputed_claim_as_fact",
    "factual_error",
    "manipulated_media",
    "misinterpreted_satire",
    "missing_important_context",
    "outdated_information",
    "other",
}
URL_RE = re.compile(r"https?://\S+")
# Lists that collect every fake started while they are open (`observed`): the contract tests
# validate all their exchanges without each test handing its fakes over.
_OBSERVERS: list[list[FakeNotesApi]] = []


@contextmanager
def observed() -> Iterator[list[FakeNotesApi]]:
    """Every `FakeNotesApi` created inside the block."""
    seen: list[FakeNotesApi] = []
    _OBSERVERS.append(seen)
    try:
        yield seen
    finally:
        _OBSERVERS.remove(seen)


def post(
    post_id: str,
    text: str,
    created_at: datetime,
    *,
    media: list[str] = (),  # type: ignore[assignment]
    note_requests: int = 0,
    author_id: str = "42",
    quoted: dict[str, Any] | None = None,
    shown_media_note: bool = False,
    source_links: list[str] = (),  # type: ignore[assignment]
) -> dict[str, Any]:
    """One eligible post (`media` are media types: photo, video, animated_gif, or "video/hls"
    for a video X offers only as an HLS playlist; `quoted` another `post()`,
    served in the includes when its expansion is asked for; `shown_media_note`: a note on the
    same media is already shown, X's `matched_media_notes`)."""
    item: dict[str, Any] = {
        "id": post_id,
        "text": text,
        "author_id": author_id,
        "created_at": created_at.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        "lang": "en",
        "edit_history_tweet_ids": [post_id],
    }
    if media:
        # Media keys are "<type number>_<digits>" (spec 2.159's MediaKey pattern; X numbers
        # photos 3, videos 7, GIFs 16).
        keys = [f"{_KEY_TYPE.get(kind, 3)}_{post_id}{i}" for i, kind in enumerate(media)]
        item["attachments"] = {"media_keys": keys}
        item["_media"] = [_media(key, kind) for key, kind in zip(keys, media, strict=True)]
    if quoted is not None:
        item["referenced_tweets"] = [{"type": "quoted", "id": quoted["id"]}]
        item["_quoted"] = quoted
    if note_requests:
        # PostNoteRequestSuggestions (spec 2.167): suggestion_id, suggestion, source_link.
        item["note_request_suggestions"] = [
            {"suggestion_id": str(i), "suggestion": "needs context"} for i in range(note_requests)
        ]
    if shown_media_note:
        item["matched_media_notes"] = [
            {"note_id": f"9{post_id}", "match_status": "matched_and_shown"}
        ]
    if source_links:
        item["suggested_source_links"] = list(source_links)
    return item


_KEY_TYPE = {"photo": 3, "video": 7, "video/hls": 7, "animated_gif": 16}
VIDEO_CDN = "https://video.twimg.com"
# The fields a media object always carries; the others only when `media.fields` asks for them.
_MEDIA_DEFAULT_FIELDS = {"media_key", "type"}


def _media(key: str, kind: str) -> dict[str, Any]:
    """A media object as X includes it. A video's or GIF's files are its `variants` (spec
    2.159 `Video` / `AnimatedGif` -> `Variants` of `Variant` {bit_rate, content_type, url};
    spec 2.167 `Media.variants` = `MediaVariants`, `bit_rate` "Absent for playlist variants"),
    beside `duration_ms` and the `preview_image_url` a client shows."""
    if kind == "photo":
        return {"media_key": key, "type": kind, "url": f"https://pbs.twimg.com/media/{key}.jpg"}
    out: dict[str, Any] = {"media_key": key, "type": kind.split("/")[0]}
    if kind not in _KEY_TYPE:
        return out  # a type this fake gives nothing else for
    base = f"{VIDEO_CDN}/ext_tw_video/{key}/pu"
    out["preview_image_url"] = f"https://pbs.twimg.com/ext_tw_video_thumb/{key}/pu/img/p.jpg"
    if kind == "animated_gif":
        # A GIF is one silent MP4 at bit rate 0, with no duration.
        out["variants"] = [
            {
                "bit_rate": 0,
                "content_type": "video/mp4",
                "url": f"{VIDEO_CDN}/tweet_video/{key}.mp4",
            }
        ]
        return out
    out["duration_ms"] = 20_000
    out["variants"] = [{"content_type": "application/x-mpegURL", "url": f"{base}/pl/p.m3u8"}]
    if kind == "video":
        out["variants"] += [
            {"bit_rate": 832_000, "content_type": "video/mp4", "url": f"{base}/vid/640x360/v.mp4"},
            {"bit_rate": 256_000, "content_type": "video/mp4", "url": f"{base}/vid/480x270/v.mp4"},
        ]
    return out


def media_fields(item: dict[str, Any], asked: set[str]) -> dict[str, Any]:
    """A media object with only the fields `media.fields` asked for (as X answers)."""
    return {k: v for k, v in item.items() if k in _MEDIA_DEFAULT_FIELDS or k in asked}


# The feed fields only spec 2.167 names; 2.159 cannot ask for them.
ONLY_2167 = ("note_request_suggestions", "matched_media_notes")
# Spec 2.167's problem types by status (its `Problem` is a oneOf over these); 2.159 sends
# `about:blank` problems (its GenericProblem), as X's 429 and 503 answers are.
_PROBLEM_TYPES = {
    400: ("invalid-request", {}),
    403: ("disallowed-resource", {}),
    404: ("resource-not-found", {"resource_type": "post"}),
    500: ("internal-error", {}),
    503: ("internal-error", {}),
}


def problem(status: int, title: str, detail: str, dialect: str = "2.159") -> dict[str, Any]:
    body: dict[str, Any] = {"title": title, "detail": detail, "status": status}
    if dialect == "2.167" and status in _PROBLEM_TYPES:
        kind, extra = _PROBLEM_TYPES[status]
        return {**body, "type": f"https://api.x.com/2/problems/{kind}", **extra}
    return {**body, "type": "about:blank"}


def render(item: dict[str, Any], dialect: str, fields: set[str]) -> dict[str, Any]:
    """A post as the feed answers it: the fields asked for, in the request's naming."""
    out = {k: v for k, v in item.items() if not k.startswith("_")}
    for name in (*ONLY_2167, "suggested_source_links"):
        if name not in fields or (dialect == "2.159" and name in ONLY_2167):
            out.pop(name, None)
    if dialect == "2.159" and "suggested_source_links" in out:
        # Spec 2.159 types these links as UrlEntity objects.
        out["suggested_source_links"] = [
            {"start": 0, "end": len(u), "url": u} for u in out["suggested_source_links"]
        ]
    if dialect == "2.167":
        renames = {
            "edit_history_tweet_ids": "edit_history_post_ids",
            "note_tweet": "note_post",
            "referenced_tweets": "referenced_posts",
        }
        out = {renames.get(k, k): v for k, v in out.items()}
    return out


@dataclass
class Failure:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    times: int = 1
    # Do the work first, then answer with the failure: the call landed, its answer was lost.
    after: bool = False


@dataclass(frozen=True)
class Recorded:
    """One request as it arrived and the answer sent, byte for byte."""

    method: str
    target: str  # path and query, as sent
    headers: dict[str, str]
    body: bytes
    status: int
    response_body: bytes
    response_headers: dict[str, str]


@dataclass
class Note:
    id: str
    post_id: str
    test_mode: bool
    info: dict[str, Any]
    created_at: datetime


def note_length(text: str) -> int:
    """The length X checks: every URL counts as one character."""
    return len(URL_RE.sub("u", text))


class FakeNotesApi:
    def __init__(
        self,
        pages: list[list[dict[str, Any]]] | None = None,
        *,
        scores: dict[str, float] | None = None,
        default_score: float = 0.8,
        daily_limit: int | None = None,
        admitted: bool = False,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        buckets: dict[str, str] | None = None,
        written_page_size: int = 2,
        dialects: tuple[str, ...] = ("2.159", "2.167"),
    ) -> None:
        self.pages = pages or []
        self.dialects = dialects
        self.scores = scores or {}
        self.default_score = default_score
        self.daily_limit = daily_limit
        self.admitted = admitted
        self.clock = clock
        self.buckets = buckets or {
            "UrlValidity": "High",
            "HarassmentAbuse": "High",
            "ClaimOpinion": "High",
        }
        self.written_page_size = written_page_size
        self.notes: list[Note] = []
        self.evaluated: list[dict[str, Any]] = []
        self.failures: dict[str, list[Failure]] = {}
        self._calls: Counter[str] = Counter()
        # Every request on the wire and its answer, for the contract tests (tests/contract).
        self.exchanges: list[Recorded] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        for seen in _OBSERVERS:
            seen.append(self)

    def __enter__(self) -> FakeNotesApi:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def calls(self, endpoint: str | None = None) -> int:
        with self._lock:
            return self._calls[endpoint] if endpoint else sum(self._calls.values())

    def fail(self, endpoint: str, failure: Failure) -> None:
        self.failures.setdefault(endpoint, []).append(failure)

    # --- Handlers: (status, body, headers) -----------------------------------------------

    def handle(
        self, method: str, path: str, query: dict[str, str], body: Any, auth: str
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        endpoint = f"{method} {path}"
        with self._lock:
            self._calls[endpoint] += 1
            queued = self.failures.get(endpoint)
            failure = queued[0] if queued else None
            if queued and failure is not None:
                failure.times -= 1
                if failure.times <= 0:
                    queued.pop(0)
        if failure is not None and not failure.after:
            return failure.status, self._failure_body(failure, path, query), failure.headers
        answer = self._answer(method, path, query, body, auth)
        if failure is not None:
            return failure.status, self._failure_body(failure, path, query), failure.headers
        return answer

    @staticmethod
    def _dialect(path: str, query: dict[str, str]) -> str:
        """The spec a request speaks: 2.167 for its own path and field names."""
        return "2.167" if path == "/2/notes/evaluate" or "post.fields" in query else "2.159"

    def _failure_body(self, failure: Failure, path: str, query: dict[str, str]) -> dict[str, Any]:
        title = str(failure.body.get("title", "Error"))
        base = problem(failure.status, title, title, self._dialect(path, query))
        return {**base, **failure.body}

    def _answer(
        self, method: str, path: str, query: dict[str, str], body: Any, auth: str
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        endpoint = f"{method} {path}"
        # OAuth 1.0a user context: tweepy's OAuth1 signs with oauth_signature in the header.
        dialect = self._dialect(path, query)
        if not auth.startswith("OAuth ") or "oauth_signature" not in auth:
            return 401, problem(401, "Unauthorized", "user context required", dialect), {}
        if endpoint in ("POST /2/evaluate_note", "POST /2/notes/evaluate") and (
            dialect not in self.dialects
        ):
            # A live API that knows only the other spec's evaluate path.
            return 404, problem(404, "Not Found Error", f"no route {endpoint}", dialect), {}
        routes = {
            "GET /2/notes/search/posts_eligible_for_notes": self._eligible,
            "POST /2/notes/evaluate": lambda _, b: self._evaluate(path, b),
            "POST /2/evaluate_note": lambda _, b: self._evaluate(path, b),
            "POST /2/notes": self._create,
            "GET /2/notes/search/notes_written": self._written,
        }
        route = routes.get(endpoint)
        if route is None:
            return 404, problem(404, "Not Found Error", f"no route {endpoint}", dialect), {}
        return route(query, body)

    def _refused(
        self, test_mode: Any, dialect: str = "2.159"
    ) -> tuple[int, dict[str, Any], dict[str, str]] | None:
        if test_mode in (True, "true"):
            return None
        if test_mode in (False, "false") and self.admitted:
            return None
        detail = "test_mode must be true until the writer is admitted"
        return 403, problem(403, "Forbidden", detail, dialect), {}

    def _eligible(
        self, query: dict[str, str], _: Any
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        dialect = self._dialect("", query)
        refused = self._refused(query.get("test_mode"), dialect)
        if refused:
            return refused
        if dialect not in self.dialects:
            param = "post.fields" if dialect == "2.167" else "tweet.fields"
            detail = f"The query parameter [{param}] is not one of the parameters of this route"
            return 400, problem(400, "Invalid Request", detail, dialect), {}
        fields = set((query.get("post.fields") or query.get("tweet.fields") or "").split(","))
        expansions = set((query.get("expansions") or "").split(","))
        index = int(query.get("pagination_token") or 0)
        if index >= len(self.pages):
            return 200, {"meta": {"result_count": 0}}, {}
        items = self.pages[index]
        quoted = [i["_quoted"] for i in items if "_quoted" in i]
        if not expansions & {"referenced_tweets.id", "referenced_posts"}:
            quoted = []
        with_media = items + quoted if "attachments.media_keys" in expansions else []
        asked = set((query.get("media.fields") or "").split(","))
        media = [media_fields(m, asked) for item in with_media for m in item.get("_media", [])]
        includes: dict[str, Any] = {
            "users": [
                {"id": i["author_id"], "username": f"user{i['author_id']}", "name": "U"}
                for i in items + quoted
            ]
        }
        # X leaves out empty lists (the specs' arrays have minItems 1).
        if media:
            includes["media"] = media
        if quoted:
            includes["posts" if dialect == "2.167" else "tweets"] = [
                render(q, dialect, fields) for q in quoted
            ]
        meta: dict[str, Any] = {"result_count": len(items)}
        if index + 1 < len(self.pages):
            meta["next_token"] = str(index + 1)
        data = [render(item, dialect, fields) for item in items]
        return 200, {"data": data, "includes": includes, "meta": meta}, {}

    def _known(self, post_id: str) -> bool:
        return any(item["id"] == post_id for page in self.pages for item in page)

    def _evaluate(self, path: str, body: Any) -> tuple[int, dict[str, Any], dict[str, str]]:
        dialect = self._dialect(path, {})
        # Exactly {note_text, post_id}: extra fields are a 400 (AlexMahadevan/cn-bot).
        if not isinstance(body, dict) or set(body) != {"note_text", "post_id"}:
            detail = "expected note_text and post_id"
            return 400, problem(400, "Invalid Request", detail, dialect), {}
        if not self._known(str(body["post_id"])):
            return 404, problem(404, "Not Found Error", "post not found", dialect), {}
        self.evaluated.append(body)
        score = self.scores.get(str(body["post_id"]), self.default_score)
        return 200, {"data": {"claim_opinion_score": score}}, {}

    def _create(self, _: dict[str, str], body: Any) -> tuple[int, dict[str, Any], dict[str, str]]:
        invalid = _invalid_note(body)
        if invalid:
            return 400, problem(400, "Invalid Request", invalid), {}
        refused = self._refused(body["test_mode"])
        if refused:
            return refused
        post_id = str(body["post_id"])
        if not self._known(post_id):
            return 404, problem(404, "Not Found Error", "post is not eligible"), {}
        now = self.clock()
        with self._lock:
            if any(n.post_id == post_id for n in self.notes):
                detail = "User already created a note for this post."
                return 400, problem(400, "Invalid Request", detail), {}
            recent = [n for n in self.notes if now - n.created_at < timedelta(hours=24)]
            if self.daily_limit is not None and len(recent) >= self.daily_limit:
                detail = "You have reached your daily limit for writing notes."
                return 429, problem(429, "Too Many Requests", detail), {}
            note = Note(
                str(1900000000000000000 + len(self.notes)),
                post_id,
                bool(body["test_mode"]),
                body["info"],
                now,
            )
            self.notes.append(note)
        # 201 Created, as spec 2.167 has it (2.159 says 200).
        return 201, {"data": {"id": note.id}}, {}

    def _written(self, query: dict[str, str], _: Any) -> tuple[int, dict[str, Any], dict[str, str]]:
        refused = self._refused(query.get("test_mode"))
        if refused:
            return refused
        start = int(query.get("pagination_token") or 0)
        chunk = self.notes[start : start + self.written_page_size]
        data = [
            {
                "id": n.id,
                "info": {**n.info, "post_id": n.post_id},
                "status": "needs_more_ratings",
                "test_result": {
                    "evaluation_outcome": [
                        {"evaluator_type": k, "evaluator_score_bucket": v}
                        for k, v in self.buckets.items()
                    ]
                },
            }
            for n in chunk
        ]
        meta: dict[str, Any] = {"result_count": len(data)}
        if start + self.written_page_size < len(self.notes):
            meta["next_token"] = str(start + self.written_page_size)
        return 200, {"data": data, "meta": meta}, {}


def _invalid_note(body: Any) -> str | None:
    """What X's note validation refuses (docs.x.com quickstart: 1-280 characters, a source URL,
    a classification, misleading_tags required when misleading)."""
    if not isinstance(body, dict) or set(body) != {"test_mode", "post_id", "info"}:
        return "expected test_mode, post_id and info"
    info = body["info"]
    if not isinstance(info, dict):
        return "info must be an object"
    text = info.get("text")
    if not isinstance(text, str) or not 1 <= note_length(text) <= 280:
        return "text must be 1-280 characters"
    if not URL_RE.search(text):
        return "text must include a source URL"
    if info.get("classification") not in CLASSIFICATIONS:
        return "unknown classification"
    tags = info.get("misleading_tags")
    if info["classification"] != "not_misleading" and (
        not tags or not isinstance(tags, list) or not set(tags) <= TAGS
    ):
        return "misleading_tags required and must be known tags"
    if not isinstance(info.get("trustworthy_sources"), bool):
        return "trustworthy_sources must be a boolean"
    return None


def _handler(api: FakeNotesApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def _serve(self, method: str) -> None:
            parts = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            status, payload, headers = api.handle(
                method, parts.path, query, body, self.headers.get("Authorization", "")
            )
            data = json.dumps(payload).encode()
            # X sends its errors as RFC 7807 problems (the specs' `default` answers).
            kind = "application/json" if status < 400 else "application/problem+json"
            sent = {"Content-Type": kind, "Content-Length": str(len(data)), **headers}
            self.send_response(status)
            for name, value in sent.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            recorded = Recorded(
                method, self.path, dict(self.headers.items()), raw, status, data, sent
            )
            with api._lock:
                api.exchanges.append(recorded)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

    return Handler
