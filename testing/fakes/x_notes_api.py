"""A loopback fake of the four Community Notes endpoints, for tests and `make notes-demo`.

Shaped after the primary sources (each handler cites its own):
docs.x.com/x-api/community-notes/quickstart (feed, note body, one note per post, OAuth 1.0a
user context), .../evaluate-a-community-note (`{note_text, post_id}` ->
`data.claim_opinion_score`), .../create-community-notes (`{test_mode, post_id, info}` ->
`data.id`), .../search-community-notes-written and twitter/communitynotes
template-api-note-writer (`info.post_id`, `test_result.evaluation_outcome[]` buckets). The
"daily limit" answer and the refusal of non-test calls before admission follow
docs/community-notes.md (Goodheart-Labs/cn-return-bot writingLimit.ts; communitynotes #455).

    with FakeNotesApi(pages=[[post(...), ...], ...]) as api:
        api.base_url          # "http://127.0.0.1:PORT"
        api.calls("POST /2/notes")
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Callable
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


def post(
    post_id: str,
    text: str,
    created_at: datetime,
    *,
    media: list[str] = (),  # type: ignore[assignment]
    note_requests: int = 0,
    author_id: str = "42",
) -> dict[str, Any]:
    """One eligible post in the API v2 shape (`media` are media types: photo, video)."""
    item: dict[str, Any] = {
        "id": post_id,
        "text": text,
        "author_id": author_id,
        "created_at": created_at.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        "lang": "en",
        "edit_history_tweet_ids": [post_id],
    }
    if media:
        item["attachments"] = {"media_keys": [f"3_{post_id}_{i}" for i in range(len(media))]}
        item["_media"] = [
            {
                "media_key": f"3_{post_id}_{i}",
                "type": kind,
                **(
                    {"url": f"https://pbs.twimg.com/media/{post_id}_{i}.jpg"}
                    if kind == "photo"
                    else {}
                ),
            }
            for i, kind in enumerate(media)
        ]
    if note_requests:
        item["note_request_suggestions"] = [{"id": str(i)} for i in range(note_requests)]
    return item


@dataclass
class Failure:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    times: int = 1
    # Do the work first, then answer with the failure: the call landed, its answer was lost.
    after: bool = False


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
    ) -> None:
        self.pages = pages or []
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
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

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
            return failure.status, failure.body, failure.headers
        answer = self._answer(method, path, query, body, auth)
        if failure is not None:
            return failure.status, failure.body, failure.headers
        return answer

    def _answer(
        self, method: str, path: str, query: dict[str, str], body: Any, auth: str
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        endpoint = f"{method} {path}"
        # OAuth 1.0a user context: tweepy's OAuth1 signs with oauth_signature in the header.
        if not auth.startswith("OAuth ") or "oauth_signature" not in auth:
            return 401, {"title": "Unauthorized", "detail": "user context required"}, {}
        routes = {
            "GET /2/notes/search/posts_eligible_for_notes": self._eligible,
            "POST /2/notes/evaluate": self._evaluate,
            "POST /2/evaluate_note": self._evaluate,
            "POST /2/notes": self._create,
            "GET /2/notes/search/notes_written": self._written,
        }
        route = routes.get(endpoint)
        if route is None:
            return 404, {"title": "Not Found Error", "detail": f"no route {endpoint}"}, {}
        return route(query, body)

    def _refused(self, test_mode: Any) -> tuple[int, dict[str, Any], dict[str, str]] | None:
        if test_mode in (True, "true"):
            return None
        if test_mode in (False, "false") and self.admitted:
            return None
        detail = "test_mode must be true until the writer is admitted"
        return 403, {"title": "Forbidden", "detail": detail}, {}

    def _eligible(
        self, query: dict[str, str], _: Any
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        refused = self._refused(query.get("test_mode"))
        if refused:
            return refused
        index = int(query.get("pagination_token") or 0)
        if index >= len(self.pages):
            return 200, {"meta": {"result_count": 0}}, {}
        items = self.pages[index]
        media = [m for item in items for m in item.get("_media", [])]
        data = [{k: v for k, v in item.items() if k != "_media"} for item in items]
        users = [
            {"id": i["author_id"], "username": f"user{i['author_id']}", "name": "U"} for i in items
        ]
        meta: dict[str, Any] = {"result_count": len(data)}
        if index + 1 < len(self.pages):
            meta["next_token"] = str(index + 1)
        body = {"data": data, "includes": {"media": media, "users": users}, "meta": meta}
        return 200, body, {}

    def _known(self, post_id: str) -> bool:
        return any(item["id"] == post_id for page in self.pages for item in page)

    def _evaluate(self, _: dict[str, str], body: Any) -> tuple[int, dict[str, Any], dict[str, str]]:
        # Exactly {note_text, post_id}: extra fields are a 400 (AlexMahadevan/cn-bot).
        if not isinstance(body, dict) or set(body) != {"note_text", "post_id"}:
            return 400, {"title": "Invalid Request", "detail": "expected note_text and post_id"}, {}
        if not self._known(str(body["post_id"])):
            return 404, {"title": "Not Found Error", "detail": "post not found"}, {}
        self.evaluated.append(body)
        score = self.scores.get(str(body["post_id"]), self.default_score)
        return 200, {"data": {"claim_opinion_score": score}}, {}

    def _create(self, _: dict[str, str], body: Any) -> tuple[int, dict[str, Any], dict[str, str]]:
        problem = _invalid_note(body)
        if problem:
            return 400, {"title": "Invalid Request", "detail": problem}, {}
        refused = self._refused(body["test_mode"])
        if refused:
            return refused
        post_id = str(body["post_id"])
        if not self._known(post_id):
            return 404, {"title": "Not Found Error", "detail": "post is not eligible"}, {}
        now = self.clock()
        with self._lock:
            if any(n.post_id == post_id for n in self.notes):
                detail = "User already created a note for this post."
                return 400, {"title": "Invalid Request", "detail": detail}, {}
            recent = [n for n in self.notes if now - n.created_at < timedelta(hours=24)]
            if self.daily_limit is not None and len(recent) >= self.daily_limit:
                detail = "You have reached your daily limit for writing notes."
                return 429, {"title": "Too Many Requests", "detail": detail}, {}
            note = Note(
                str(1900000000000000000 + len(self.notes)),
                post_id,
                bool(body["test_mode"]),
                body["info"],
                now,
            )
            self.notes.append(note)
        return 200, {"data": {"id": note.id}}, {}

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
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

    return Handler
