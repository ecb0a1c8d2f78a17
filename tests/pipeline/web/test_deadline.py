"""`pipeline.web.deadline` on its own: the watchdog and the body reader that checks the deadline
after every chunk, against a real server on loopback dripping a body (testing/fakes)."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from pipeline.web.deadline import Deadline, DeadlineExceeded, bound_body, within
from testing.fakes.http_server import LocalHTTPServer, Route


class Late(Exception):
    pass


def test_a_body_read_past_the_deadline_raises_at_the_next_chunk(
    http_server: LocalHTTPServer,
) -> None:
    # 200 bytes, one every 0.2 s: 40 s to read whole, and never a read timeout.
    http_server.add("/drip", Route(body=b"x" * 200, chunk_size=1, chunk_delay_s=0.2))
    with httpx.Client(timeout=5.0) as client, client.stream("GET", http_server.url("/drip")) as r:
        bound_body(r, Deadline(1.0, "read"), Late)
        t0 = time.monotonic()
        with pytest.raises(Late):
            r.read()
        assert time.monotonic() - t0 < 1.0 + 0.2 + 0.5


def test_within_answers_at_the_deadline_and_passes_results_and_errors_through() -> None:
    release = threading.Event()
    t0 = time.monotonic()
    with pytest.raises(DeadlineExceeded, match=r"deadline: call exceeded 0\.3 s"):
        deadline = Deadline(0.3, "call")
        within(release.wait, deadline, lambda: DeadlineExceeded(deadline.message(), stage="s"))
    assert time.monotonic() - t0 < 0.3 + 0.5
    release.set()
    assert within(lambda: 7, Deadline(5.0, "call"), Late) == 7
    with pytest.raises(KeyError):
        within(lambda: {}["missing"], Deadline(5.0, "call"), Late)


def test_the_sooner_deadline_names_itself_in_the_message() -> None:
    own, check = Deadline(10.0, "llm call for analyze"), Deadline(1.0, "check")
    assert own.sooner(check) is check and check.sooner(own) is check
    assert check.message("llm call for analyze") == (
        "deadline: check exceeded 1 s during llm call for analyze"
    )
    assert own.message("llm call for analyze") == "deadline: llm call for analyze exceeded 10 s"
