"""Which `factnote run` instance polls: exactly one among many, and another within seconds of
its death.

APScheduler 3 must not share a job store between schedulers, so every instance schedules the
same jobs and only the leader runs the polls (and the other leader-only steps). On PostgreSQL
the leader is the instance holding a session-level advisory lock on a connection kept for the
process's life: the server releases the lock the moment that session ends, a SIGKILL or a
lost machine included (TCP keepalives bound the latter), and a standby trying every
`leader_retry_s` takes over. On SQLite there is one process, and it is always the leader.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Protocol

import psycopg

from storage.dialect import conninfo, is_postgres

log = logging.getLogger(__name__)

# The advisory lock's key: one per database, "factnote" in ASCII.
LEADER_LOCK_KEY = 0x66616374_6E6F7465
# A dead peer's connection is dropped by the server after about idle + interval * count s.
_KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 3,
}


def leadership_for(
    database_url: str, *, retry_s: float, on_elected: Callable[[], None] | None = None
) -> Leadership:
    """The advisory-lock leader on PostgreSQL; the sole process on SQLite."""
    if is_postgres(database_url):
        return AdvisoryLockLeader(conninfo(database_url), retry_s=retry_s, on_elected=on_elected)
    return SoleLeader()


class Leadership(Protocol):
    def is_leader(self) -> bool: ...

    def start(self) -> None: ...

    def stop(self) -> None: ...


class SoleLeader:
    """The one process of an embedded (SQLite) deployment."""

    def is_leader(self) -> bool:
        return True

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


class AdvisoryLockLeader:
    """Leadership as a PostgreSQL session-level advisory lock, tried (and, once held, checked)
    every `retry_s` by a background thread. `on_elected` runs when this instance becomes the
    leader (the scheduler polls at once instead of waiting for the next interval)."""

    def __init__(
        self,
        conninfo: str,
        *,
        retry_s: float = 2.0,
        key: int = LEADER_LOCK_KEY,
        on_elected: Callable[[], None] | None = None,
    ) -> None:
        self.conninfo, self.retry_s, self.key = conninfo, retry_s, key
        self.on_elected = on_elected
        self._conn: psycopg.Connection | None = None
        self._leader = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def is_leader(self) -> bool:
        with self._lock:
            return self._leader

    def start(self) -> None:
        """Try at once (so a single instance polls from its first second), then in the
        background."""
        self.check()
        self._thread = threading.Thread(target=self._run, name="leader-election", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Give the lock up (closing the session releases it) for a standby to take over."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.retry_s + 5)
        with self._lock:
            self._leader = False
            self._close()

    def check(self) -> bool:
        """One round: take the lock if free, or confirm the session holding it is alive."""
        elected = False
        with self._lock:
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = psycopg.connect(
                        psycopg.conninfo.make_conninfo(self.conninfo, **_KEEPALIVES),
                        autocommit=True,
                    )
                if self._leader:
                    self._conn.execute("SELECT 1")
                else:
                    row = self._conn.execute(
                        "SELECT pg_try_advisory_lock(%s)", (self.key,)
                    ).fetchone()
                    self._leader = bool(row and row[0])
                    elected = self._leader
            except psycopg.Error as exc:
                # The session (and the lock with it) may be gone: stop polling until it is
                # taken again, so that two instances never poll at once.
                if self._leader:
                    log.warning("leader: lost the database session (%s); standing by", exc)
                self._leader = False
                self._close()
            leader = self._leader
        if elected:
            log.info("leader: this instance now polls")
            if self.on_elected is not None:
                self.on_elected()
        return leader

    def _run(self) -> None:
        while not self._stop.wait(self.retry_s):
            self.check()

    def _close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                self._conn.close()
            self._conn = None
