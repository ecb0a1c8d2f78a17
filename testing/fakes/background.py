"""The threaded local HTTP server under each fake (`http_server`, `openai_server`): bound to
an ephemeral port when started, served by a daemon thread, stopped by `stop` or by leaving
the `with` block."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class BackgroundServer:
    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        # Set by `stop`: releases handlers that wait (delays, hanging replies) at once.
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def start(self) -> Self:
        server = ThreadingHTTPServer((self.host, 0), self._handler())
        server.daemon_threads = True
        self._server = server
        # A short poll interval keeps shutdown (once per test) quick.
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=type(self).__name__,
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("server not started")
        return int(self._server.server_address[1])
