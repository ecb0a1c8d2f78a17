"""A scripted OpenAI-compatible chat-completions server for tests and benchmarks.

It is a real HTTP server on 127.0.0.1 speaking the OpenAI wire format, so the code under test
runs its real SDK client and network path. Answers are scripted per pipeline step: each
request is keyed by the step name the client sends in its `X-Factnote-Step` header
(`pipeline.llm.client.STEP_HEADER`: "analyze", "evidence", "write", ...), never by a schema class
name or prompt text, so renaming a schema or rewording a prompt leaves every script working. A
script is a list of replies consumed in order (the last one repeats) or a callable that builds a
reply from the request body; one script may serve several steps (("write", "rewrite") for drafts).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from pipeline.config import LLMConfig
from pipeline.llm.client import STEP_HEADER
from testing.fakes.background import BackgroundServer

NO_STEP = ""
CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
# How long a "hang" reply holds the connection before dropping it, unless the server stops.
HANG_MAX_S = 60.0


@dataclass(frozen=True)
class Reply:
    """One scripted answer. Build it with the class methods; plain dicts and strings also work."""

    content: str | None = ""
    status: int = 200
    error_body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    finish_reason: str = "stop"
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    omit_usage: bool = False
    refusal: str | None = None
    hang: bool = False
    drop: bool = False
    # Seconds between the body's bytes, sent one at a time: each read returns well within any
    # read timeout, so only a total deadline ends the call (issue 33's dripping endpoint).
    drip_s: float = 0.0
    raw_body: str | None = None  # sent verbatim instead of a completion (a proxy page, say)
    content_type: str = "application/json"

    @classmethod
    def json(cls, obj: Any, **kw: Any) -> Reply:
        return cls(content=json.dumps(obj, ensure_ascii=False), **kw)

    @classmethod
    def text(cls, text: str, **kw: Any) -> Reply:
        return cls(content=text, **kw)

    @classmethod
    def error(
        cls, status: int, body: Any = None, headers: dict[str, str] | None = None, **kw: Any
    ) -> Reply:
        return cls(content=None, status=status, error_body=body, headers=headers or {}, **kw)

    @classmethod
    def refused(cls, refusal: str, **kw: Any) -> Reply:
        return cls(content=None, refusal=refusal, **kw)

    @classmethod
    def hanging(cls) -> Reply:
        """Never answers (until the server stops): the client's timeout must fire."""
        return cls(content=None, hang=True)

    @classmethod
    def body(cls, text: str, content_type: str = "text/html", status: int = 200) -> Reply:
        """An arbitrary body in place of a chat completion."""
        return cls(content=None, raw_body=text, content_type=content_type, status=status)

    @classmethod
    def dripping(cls, obj: Any, every_s: float) -> Reply:
        """`obj` as a JSON answer whose body comes one byte every `every_s` seconds."""
        return cls.json(obj, drip_s=every_s)

    @classmethod
    def dropped(cls) -> Reply:
        """Closes the connection without an answer."""
        return cls(content=None, drop=True)


ReplyLike = Reply | dict[str, Any] | list[Any] | str
Responder = Callable[[dict[str, Any]], ReplyLike]


def to_reply(value: ReplyLike) -> Reply:
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply.text(value)
    return Reply.json(value)


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    headers: dict[str, str]  # lower-cased names
    body: dict[str, Any]
    key: str  # the step name the client sent, or NO_STEP

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def schema(self) -> dict[str, Any] | None:
        fmt = self.body.get("response_format") or {}
        js = fmt.get("json_schema") if isinstance(fmt, dict) else None
        return js.get("schema") if isinstance(js, dict) else None


def request_key(headers: dict[str, str]) -> str:
    """The step a request belongs to, from its lower-cased headers."""
    return headers.get(STEP_HEADER.lower(), NO_STEP)


def _unscripted(key: str) -> str:
    if key == NO_STEP:
        return f"fake_llm: the request carries no {STEP_HEADER} header"
    return f"fake_llm: no script for step {key!r}"


def message_chars(messages: list[dict[str, Any]]) -> int:
    total = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            total += len(content)
        elif isinstance(content, list):
            total += sum(len(p.get("text", "")) for p in content if isinstance(p, dict))
    return total


class _Script:
    def __init__(self, replies: list[ReplyLike] | None, responder: Responder | None) -> None:
        self._replies = replies
        self._responder = responder
        self._next = 0

    def take(self, body: dict[str, Any]) -> Reply:
        if self._responder is not None:
            return to_reply(self._responder(body))
        assert self._replies
        index = min(self._next, len(self._replies) - 1)
        self._next += 1
        return to_reply(self._replies[index])


class FakeLLM(BackgroundServer):
    """The server plus its script and request log. Use as a context manager."""

    def __init__(self, *, delay_s: float = 0.0) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._scripts: dict[str, _Script] = {}
        self._requests: list[RecordedRequest] = []
        self._delay_s = delay_s
        self._ids = itertools.count(1)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(_Handler):
            owner = fake

        return Handler

    # --- the test-facing API ---

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def script(self, name: str | tuple[str, ...], *replies: ReplyLike | Responder) -> None:
        """Script the answers to calls of step `name`; a tuple of steps shares one script, its
        replies consumed in the order the steps are called."""
        if not replies:
            raise ValueError("script() needs at least one reply")
        if len(replies) == 1 and callable(replies[0]):
            entry = _Script(None, replies[0])
        else:
            if any(callable(r) for r in replies):
                raise ValueError("a responder callable must be the only entry of a script")
            entry = _Script([r for r in replies if not callable(r)], None)
        with self._lock:
            for step in (name,) if isinstance(name, str) else name:
                self._scripts[step] = entry

    def set_delay(self, seconds: float) -> None:
        """Delay every answer by `seconds` (on top of a reply's own delay)."""
        with self._lock:
            self._delay_s = seconds

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def requests_for(self, *steps: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.key in steps]

    def calls(self, *steps: str) -> int:
        return len(self.requests_for(*steps))

    def config(self, **overrides: Any) -> LLMConfig:
        values: dict[str, Any] = {
            "base_url": self.base_url,
            "model": "fake-model",
            "timeout_s": 10.0,
        }
        values.update(overrides)
        return LLMConfig(**values)

    # --- used by the handler ---

    def _receive(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply:
        key = request_key(headers)
        with self._lock:
            self._requests.append(RecordedRequest(path=path, headers=headers, body=body, key=key))
            script = self._scripts.get(key)
            delay = self._delay_s
            reply = (
                script.take(body)
                if script is not None
                # 400 is not retried, so a missing script fails a test at once and says why.
                else Reply.error(400, {"error": {"message": _unscripted(key)}})
            )
        if delay + reply.delay_s > 0:
            self._stopping.wait(delay + reply.delay_s)
        return reply

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        content = reply.content
        prompt = reply.prompt_tokens
        if prompt is None:
            prompt = message_chars(body.get("messages", [])) // 4
        completion = reply.completion_tokens
        if completion is None:
            completion = len(content or "") // 4
        payload: dict[str, Any] = {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", ""),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": reply.refusal},
                    "finish_reason": reply.finish_reason,
                    "logprobs": None,
                }
            ],
        }
        if not reply.omit_usage:
            payload["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
        return payload


class _Handler(BaseHTTPRequestHandler):
    owner: FakeLLM
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        if self.path.split("?")[0] not in CHAT_PATHS:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._send_json(400, {"error": {"message": "body is not JSON"}})
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        reply = self.owner._receive(self.path, headers, body)
        if reply.hang:
            self.owner._stopping.wait(HANG_MAX_S)
            self.close_connection = True
            return
        if reply.drop:
            self.close_connection = True
            return
        if reply.raw_body is not None:
            self._send(reply.status, reply.raw_body.encode(), reply.content_type, reply.headers)
            return
        if reply.status != 200:
            error = reply.error_body
            if error is None:
                error = {"error": {"message": f"fake error {reply.status}", "code": reply.status}}
            self._send_json(reply.status, error, reply.headers)
            return
        self._send_json(200, self.owner._completion(body, reply), reply.headers, reply.drip_s)

    def _send_json(
        self,
        status: int,
        payload: Any,
        headers: dict[str, str] | None = None,
        drip_s: float = 0.0,
    ) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        self._send(status, data, "application/json", headers, drip_s)

    def _send(
        self,
        status: int,
        data: bytes,
        content_type: str,
        headers: dict[str, str] | None,
        drip_s: float = 0.0,
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            if not drip_s:
                self.wfile.write(data)
                return
            self.wfile.flush()
            for i in range(len(data)):
                if self.owner._stopping.wait(drip_s):
                    self.close_connection = True
                    return
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (its timeout fired); nothing left to do.
            self.close_connection = True
