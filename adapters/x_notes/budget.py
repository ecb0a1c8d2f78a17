"""The note writer's own request budget: at most `limit` calls in any `window` across the four
Community Notes endpoints (about 90 per 15 minutes, twitter/communitynotes
documentation/api/overview.md). A call over budget is refused here, before it reaches X, with
the time the oldest call in the window ages out, so the runtime schedules around it."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from datetime import datetime, timedelta

from adapters.base import RateLimited


class RequestBudget:
    def __init__(self, limit: int, window: timedelta, clock: Callable[[], datetime]) -> None:
        self.limit = limit
        self.window = window
        self._clock = clock
        self._calls: deque[datetime] = deque()
        self._lock = threading.Lock()

    def take(self, what: str) -> None:
        """Count one call, or raise `RateLimited` until the window has room."""
        now = self._clock()
        with self._lock:
            while self._calls and now - self._calls[0] >= self.window:
                self._calls.popleft()
            if len(self._calls) >= self.limit:
                reset = self._calls[0] + self.window
                raise RateLimited(
                    f"X notes {what}: own budget of {self.limit} calls per "
                    f"{self.window.total_seconds():g} s spent until {reset.isoformat()}",
                    reset_at=reset,
                )
            self._calls.append(now)

    def used(self) -> int:
        now = self._clock()
        with self._lock:
            return sum(1 for t in self._calls if now - t < self.window)
