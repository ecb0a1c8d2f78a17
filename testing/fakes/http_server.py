"""A real HTTP server on 127.0.0.1 for tests: serves a directory plus programmable routes.

It sits at the far side of the network boundary, so the code under test (httpx clients, the
fetcher, search providers) runs unmodified. Routes can answer with any status, headers and content
type, redirect, wait before answering, drip the body slowly, or send an endless body. Every
request is recorded so tests can count network calls.

    with LocalHTTPServer(root=PAGES) as server:
        server.add("/old", Route.redirect("/new"))
        server.add("/slow", Route(body=b"...", delay_s=2.0))
        server.url("/old")          # "http://127.0.0.1:PORT/old"
        server.hits("/old")         # 1 after one fetch

In a test, use the `http_server` fixture of tests/conftest.py (serving tests/fixtures/pages).
"""

from __future__ import annotations

import mimetypes
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import unquote, urlsplit

from testing.fakes.background import BackgroundServer

# An endless body stops after this much even if the client never hangs up, so that a broken
# client under test cannot fill memory or run forever.
ENDLESS_LIMIT_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str  # path with query string, as sent
    headers: dict[str, str]
    body: bytes = b""

    @property
    def route_path(self) -> str:
        return urlsplit(self.path).path


@dataclass
class Route:
    """One canned response. `content_type=None` sends no Content-Type header."""

    status: int = 200
    body: bytes | str = b""
    content_type: str | None = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # wait before the status line
    chunk_size: int = 64 * 1024
    chunk_delay_s: float = 0.0  # wait between body chunks
    endless: bool = False  # repeat `body` until the client hangs up
    send_length: bool = True  # send Content-Length (never for endless bodies)

    @staticmethod
    def redirect(location: str, status: int = 302) -> Route:
        return Route(status=status, headers={"Location": location}, content_type=None)

    @staticmethod
    def text(
        body: str, content_type: str = "text/plain; charset=utf-8", status: int = 200
    ) -> Route:
        return Route(status=status, body=body, content_type=content_type)

    def body_bytes(self) -> bytes:
        return self.body.encode("utf-8") if isinstance(self.body, str) else self.body


Handler = Route | Callable[[RecordedRequest], Route]


class LocalHTTPServer(BackgroundServer):
    """A threaded HTTP/1.0 server on 127.0.0.1 with an ephemeral port."""

    def __init__(self, root: Path | None = None, host: str = "127.0.0.1") -> None:
        super().__init__(host)
        self.root = root
        self._routes: dict[str, Handler] = {}
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    # addresses

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url(self, path: str = "/") -> str:
        return self.base_url + (path if path.startswith("/") else "/" + path)

    # routes

    def add(self, path: str, handler: Handler) -> None:
        """Answer `path` (exact, or without its query) with a Route or a function of the request."""
        with self._lock:
            self._routes[path] = handler

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        self.add(path, Route.redirect(location, status))

    # recorded traffic

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def hits(self, path: str | None = None) -> int:
        """Requests received for `path` (ignoring the query), or in total."""
        with self._lock:
            return sum(1 for r in self._requests if path is None or r.route_path == path)

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()

    # internals used by the handler

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _resolve(self, request: RecordedRequest) -> Route:
        with self._lock:
            handler = self._routes.get(request.path) or self._routes.get(request.route_path)
        if handler is not None:
            return handler(request) if callable(handler) else handler
        return self._static(request.route_path)

    def _static(self, path: str) -> Route:
        if self.root is None:
            return Route(status=404, body=b"not found", content_type="text/plain")
        root = self.root.resolve()
        target = (root / unquote(path).lstrip("/")).resolve()
        if not target.is_relative_to(root) or not target.is_file():
            return Route(status=404, body=b"not found", content_type="text/plain")
        # No charset is added: pages declare their own, as on the real web.
        content_type, _ = mimetypes.guess_type(target.name)
        return Route(
            body=target.read_bytes(), content_type=content_type or "application/octet-stream"
        )


def _make_handler(owner: LocalHTTPServer) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass  # keep test output clean

        def do_GET(self) -> None:
            self._serve(with_body=True)

        def do_HEAD(self) -> None:
            self._serve(with_body=False)

        def do_POST(self) -> None:
            self._serve(with_body=True)

        def do_PUT(self) -> None:
            self._serve(with_body=True)

        def do_DELETE(self) -> None:
            self._serve(with_body=True)

        def _serve(self, *, with_body: bool) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            request = RecordedRequest(
                method=self.command,
                path=self.path,
                headers={k: v for k, v in self.headers.items()},
                body=self.rfile.read(length) if length else b"",
            )
            owner._record(request)
            route = owner._resolve(request)
            if route.delay_s and owner._stopping.wait(route.delay_s):
                return
            body = route.body_bytes()
            try:
                self.send_response(route.status)
                if route.content_type is not None:
                    self.send_header("Content-Type", route.content_type)
                for name, value in route.headers.items():
                    self.send_header(name, value)
                if route.send_length and not route.endless:
                    self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                self.end_headers()
                if with_body:
                    self._write_body(route, body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client hung up, as fetchers with caps are meant to

        def _write_body(self, route: Route, body: bytes) -> None:
            if not body:
                return
            sent = 0
            while True:
                for start in range(0, len(body), route.chunk_size):
                    if owner._stopping.is_set():
                        return
                    self.wfile.write(body[start : start + route.chunk_size])
                    self.wfile.flush()
                    sent += min(route.chunk_size, len(body) - start)
                    if route.chunk_delay_s and owner._stopping.wait(route.chunk_delay_s):
                        return
                if not route.endless or sent >= ENDLESS_LIMIT_BYTES:
                    return

    return _Handler
