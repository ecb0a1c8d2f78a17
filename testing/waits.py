"""Waiting in tests for something another thread or process does: poll a condition against a
deadline instead of sleeping a fixed time, so a test is as quick as the work allows on a fast
machine and still passes on a loaded one."""

from __future__ import annotations

import time
from collections.abc import Callable


class WaitTimedOut(AssertionError):
    """The condition did not hold before the deadline (an AssertionError, so pytest reports it
    as the test's failure rather than an error in the helper)."""


def wait_until(
    condition: Callable[[], bool],
    timeout_s: float = 10.0,
    *,
    interval_s: float = 0.01,
    what: str = "the condition",
) -> None:
    """Return as soon as `condition()` is true; raise WaitTimedOut once `timeout_s` has passed
    without it. The condition is checked once more at the deadline, so a slow last step counts."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() >= deadline:
            if condition():
                return
            raise WaitTimedOut(f"{what} did not hold within {timeout_s:g} s")
        time.sleep(interval_s)
