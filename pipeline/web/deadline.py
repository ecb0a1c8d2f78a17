"""Total deadlines for remote calls, which httpx's (and the openai SDK's) timeouts are not.

An httpx timeout bounds each network operation: a server that sends one byte just before every
read timeout holds a call open for ever, and retries multiply whatever it holds. A `Deadline` is
a point in monotonic time; `within` runs one blocking call in a helper thread and stops waiting
for it when the deadline passes, so the caller gets its failure on time whatever the call is
blocked in. The helper is then abandoned: the call's own network timeouts are set to the time
left, and the readers check the deadline between chunks, so it ends at its next read or byte.

A check has a deadline of its own (`Checker(deadline_s=...)`); every call made for it ends by the
sooner of its own deadline and the check's.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from tenacity import RetryCallState
from tenacity.stop import stop_base

from pipeline.failures import PipelineFailure

R = TypeVar("R")

# A deadline is never waited on for less than this: a call given no time at all still gets to
# fail with its own words rather than at random.
MIN_WAIT_S = 0.01


class Deadline:
    """`seconds` from now, on the monotonic clock; `what` names it in failure messages."""

    def __init__(self, seconds: float, what: str) -> None:
        self.seconds = seconds
        self.what = what
        self.at = time.monotonic() + seconds

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())

    def expired(self) -> bool:
        return time.monotonic() >= self.at

    def timeout(self) -> float:
        """The time left, as a network timeout (never zero, which httpx reads as "none")."""
        return max(MIN_WAIT_S, self.remaining())

    def sooner(self, other: Deadline | None) -> Deadline:
        """Whichever of the two passes first (self on a tie)."""
        return other if other is not None and other.at < self.at else self

    def message(self, during: str = "") -> str:
        """ "deadline: <what> exceeded N s[ during <during>]": the one wording of every stage."""
        tail = f" during {during}" if during and during != self.what else ""
        return f"deadline: {self.what} exceeded {self.seconds:g} s{tail}"


class stop_at_deadline(stop_base):
    """A tenacity stop: no attempt starts once `deadline` has passed."""

    def __init__(self, deadline: Deadline) -> None:
        self.deadline = deadline

    def __call__(self, retry_state: RetryCallState) -> bool:
        return self.deadline.expired()


class DeadlineExceeded(PipelineFailure):
    """A deadline passed; `stage` names the stage it passed in."""

    def __init__(self, message: str, *, stage: str) -> None:
        super().__init__(message)
        self.stage = stage


def within(
    fn: Callable[[], R],
    deadline: Deadline,
    expired: Callable[[], BaseException],
    *,
    name: str = "deadline-call",
) -> R:
    """`fn()`, or `expired()` raised once `deadline` passes with `fn` still running.

    `fn` runs in a daemon thread (with the caller's context variables), so a call blocked in a
    read cannot keep the caller past the deadline; `fn`'s own exceptions are raised here."""
    if deadline.expired():
        raise expired()
    outcome: list[tuple[bool, object]] = []
    done = threading.Event()
    context = contextvars.copy_context()

    def run() -> None:
        try:
            outcome.append((True, context.run(fn)))
        except BaseException as exc:
            outcome.append((False, exc))
        finally:
            done.set()

    threading.Thread(target=run, name=name, daemon=True).start()
    if not done.wait(deadline.remaining()):
        raise expired()
    ok, value = outcome[0]
    if not ok:
        assert isinstance(value, BaseException)
        raise value
    return value  # type: ignore[return-value]


def bound_body(response: Any, deadline: Deadline, expired: Callable[[], BaseException]) -> None:
    """Make `response` (an httpx or httpx2 response whose body is not read yet) raise
    `expired()` from its body's reader once `deadline` has passed, checked after every chunk.

    The stream is wrapped in a subclass of the library's own `SyncByteStream` (its readers
    check for that class); a response of any other kind is left as it is."""
    inner = response.stream
    base = next((c for c in type(inner).__mro__ if c.__name__ == "SyncByteStream"), None)
    if base is None:
        return

    class DeadlineStream(base):  # type: ignore[misc, valid-type]
        def __iter__(self) -> Any:
            for chunk in inner:
                if deadline.expired():
                    raise expired()
                yield chunk

        def close(self) -> None:
            inner.close()

    response.stream = DeadlineStream()
