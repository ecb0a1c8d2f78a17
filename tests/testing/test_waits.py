"""`testing.waits.wait_until`: returns once another thread made the condition true, and fails
the test, naming what it waited for, when the deadline passes first."""

from __future__ import annotations

import threading

import pytest

from testing.waits import WaitTimedOut, wait_until


def test_returns_once_another_thread_makes_the_condition_true() -> None:
    done = threading.Event()
    thread = threading.Thread(target=done.set)
    thread.start()
    wait_until(done.is_set, timeout_s=10, what="the thread's signal")
    thread.join(5)
    assert done.is_set()


def test_a_condition_that_never_holds_fails_with_what_was_awaited() -> None:
    checks: list[int] = []

    def never() -> bool:
        checks.append(1)
        return False

    with pytest.raises(WaitTimedOut, match=r"the reply did not hold within 0\.05 s"):
        wait_until(never, timeout_s=0.05, what="the reply")
    assert len(checks) >= 2  # polled, and checked once more at the deadline
