"""The running bot: adapters, intake, triage, workers and maintenance on one scheduler.

`run_once` does one poll of every adapter and drains the queue (for cron and tests);
`run_forever` schedules the same steps with APScheduler until SIGINT/SIGTERM, then stops taking
work, lets requests in flight finish their transactions, and exits.

Every step rides out a database locked by another process past the busy timeout: it is run
again after a backoff, and when the lock outlasts `runtime.db_lock_attempts` runs, `run_once`
raises `DatabaseBusy` (reported in one line by the command) and `run_forever` logs a warning
and leaves the step to its next turn. Steps are safe to run again: each commits in small
idempotent transactions, and a lock error rolls back only the one it hit.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from types import FrameType
from typing import TypeVar

from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.background import BackgroundScheduler

from adapters.base import Adapter
from bot import overrides, platforms
from bot.config import Settings
from bot.logs import quiet_scheduler_logs
from bot.memory.learn import schedule_learning
from bot.moderation import actions as review
from bot.ops.claim_sync import schedule_claim_sync
from bot.ops.gc_freeze import freeze_startup_heap
from bot.ops.leader import Leadership, leadership_for
from bot.ops.runtime import Runtime
from bot.ops.summary import posted_since
from bot.ops.timelines import PullReport, pull_timelines
from bot.requests.intake import PollResult, poll
from bot.requests.posting import post_due
from bot.requests.triage import triage_pending
from bot.requests.worker import Worker
from pipeline.records import utcnow
from storage import requests
from storage.db import Database, DatabaseBusy, retry_when_locked

log = logging.getLogger(__name__)
T = TypeVar("T")


def build_adapters(settings: Settings) -> dict[str, Adapter]:
    """Every registered adapter (`bot.platforms`) whose section is enabled, by platform name."""
    return {
        spec.name: spec.build(settings)
        for spec in platforms.specs()
        if spec.section(settings).enabled
    }


@dataclass
class CycleReport:
    polls: list[PollResult] = field(default_factory=list)
    triaged: int = 0
    processed: int = 0
    posted: int = 0
    expired: int = 0
    timelines: PullReport = field(default_factory=PullReport)
    # Requests this cycle left failed, waiting to retry, or with a post set aside: the
    # technical failures `run --once` reports with a non-zero exit status.
    failed_requests: list[int] = field(default_factory=list)
    # Replies the kill switch holds (a pause, a dry-run override): working as told, not a
    # failure (issue 33).
    held_requests: list[int] = field(default_factory=list)

    @property
    def failed_polls(self) -> list[PollResult]:
        return [p for p in self.polls if p.error is not None and not p.deferred]

    @property
    def ok(self) -> bool:
        return not self.failed_polls and not self.failed_requests


def failed_since(db: Database, since: datetime) -> list[int]:
    """Requests changed since `since` that failed, wait for a retry, or hold a reply whose
    posting was deferred after an error (not one the kill switch holds: `held_since`)."""
    with db.session() as session:
        return requests.failed_since(session, since, overrides.HELD)


def held_since(db: Database, since: datetime) -> list[int]:
    """Requests changed since `since` whose reply the kill switch holds in `posting`."""
    with db.session() as session:
        return requests.held_since(session, since, overrides.HELD)


class Bot:
    def __init__(self, runtime: Runtime, adapters: dict[str, Adapter]) -> None:
        self.runtime = runtime
        self.settings = runtime.settings
        self.db = runtime.db
        self.adapters = adapters
        self.worker = Worker(self.settings, self.db, runtime.checker, adapters)
        self._stop = threading.Event()
        # Procrastinate workers (`factnote worker`) run the checks; this process only enqueues.
        self.enqueues = self.settings.queue.backend == "procrastinate"

    def bot_handles(self) -> dict[str, str]:
        return {spec.name: spec.bot_handle(self.settings) for spec in platforms.specs()}

    def start(self) -> None:
        """Before taking new work: requeue what a dead process left half-done, and settle
        replies that may have been posted just before a crash."""
        freeze_startup_heap()  # models and modules are loaded: collections skip them from now
        requeued = self._step("requeuing unfinished requests", self.worker.recover)
        if requeued:
            log.info("requeued %d request(s) left in processing", requeued)
        self._step(
            "settling replies", lambda: post_due(self.db, self.adapters, self.settings.runtime)
        )

    def poll_adapter(self, name: str) -> PollResult:
        """One scheduled poll: new summons become requests, then are triaged."""
        result = self._step(f"polling {name}", lambda: self._poll(name))
        self._triage()
        return result

    def _poll(self, name: str) -> PollResult:
        return poll(self.adapters[name], self.db, self.settings.adapter_mode(name))

    def _triage(self) -> int:
        return self._step(
            "triage",
            lambda: triage_pending(self.db, self.settings.runtime, self.bot_handles()),
        )

    def _step(self, what: str, fn: Callable[[], T]) -> T:
        """`fn`, run again with backoff while another process holds the database locked."""
        runtime = self.settings.runtime
        return retry_when_locked(
            fn, what=what, attempts=runtime.db_lock_attempts, backoff_s=runtime.db_lock_backoff_s
        )

    @staticmethod
    def _job(fn: Callable[[], object]) -> Callable[[], None]:
        """A scheduled job: a lock that outlasted the step's retries is a warning, not a
        traceback, and the job runs again at its next turn."""

        def run() -> None:
            try:
                fn()
            except DatabaseBusy as exc:
                log.warning("%s", exc)

        return run

    def pull_timelines(self) -> PullReport:
        return pull_timelines(self.runtime.shared, self.adapters)

    def maintenance(self) -> tuple[int, int]:
        # Another process's worker that died (here or on another host) loses its requests
        # when its leases run out; this is where a running bot notices.
        requeued = self._step("requeuing expired leases", self.worker.recover)
        if requeued:
            log.info("requeued %d request(s) whose worker stopped", requeued)
        expired = len(self._step("expiring reviews", lambda: review.expire_overdue(self.db)))
        posted = self._step(
            "posting", lambda: post_due(self.db, self.adapters, self.settings.runtime)
        )
        return expired, posted

    def run_once(self) -> CycleReport:
        """One cycle. Raises `DatabaseBusy` when a lock outlasts every retry."""
        report = CycleReport()
        started = utcnow()
        self.start()
        report.timelines = self.pull_timelines()
        for name in self.adapters:
            report.polls.append(self._step(f"polling {name}", partial(self._poll, name)))
        report.triaged = self._triage()
        if not self.enqueues:
            report.processed = self._step("processing requests", self.worker.drain)
        report.expired, _ = self.maintenance()
        report.posted = self._step("counting posts", lambda: posted_since(self.db, started))
        report.failed_requests = self._step(
            "counting failures", lambda: failed_since(self.db, started)
        )
        report.held_requests = self._step(
            "counting held replies", lambda: held_since(self.db, started)
        )
        return report

    def run_forever(self) -> None:
        self.start()
        # One run of a job at a time; a start missed while the previous run worked is
        # dropped, not queued (coalesce), and no "missed by" warning for a late start that is
        # merely waiting its turn (grace).
        scheduler = BackgroundScheduler(
            timezone="UTC",
            job_defaults={"max_instances": 1, "coalesce": True, "misfire_grace_time": 60},
        )
        quiet_scheduler_logs(debug=logging.getLogger().isEnabledFor(logging.DEBUG))
        # Many instances may run on one PostgreSQL database: only the leader polls.
        leader = leadership_for(
            self.settings.database_url,
            retry_s=self.settings.queue.leader_retry_s,
            on_elected=partial(self._poll_now, scheduler),
        )
        for name, adapter in self.adapters.items():
            section = getattr(self.settings, name, None)
            interval = getattr(section, "poll_interval_s", 60.0)
            scheduler.add_job(
                self._job(self._led(leader, partial(self.poll_adapter, adapter.name))),
                "interval",
                seconds=interval,
                id=f"poll-{name}",
                name=f"poll-{name}",
                next_run_time=utcnow(),
            )
        if not self.enqueues:
            scheduler.add_job(
                self._job(self._drain_until_stopped),
                "interval",
                seconds=1,
                id="drain",
                name="drain",
            )
        scheduler.add_job(
            self._led(leader, self.pull_timelines),
            "interval",
            seconds=self.settings.runtime.timeline_interval_s,
            id="authority-timelines",
            name="authority-timelines",
            next_run_time=utcnow(),
        )
        scheduler.add_job(
            self._job(self._led(leader, self.maintenance)),
            "interval",
            seconds=self.settings.runtime.maintenance_interval_s,
            id="maintenance",
            name="maintenance",
        )
        led = partial(self._led_job, leader)  # one instance learns, one syncs fact-checks
        schedule_learning(scheduler, self.settings, self.runtime.shared.memory, wrap=led)
        schedule_claim_sync(
            scheduler, self.settings, self.db, self.runtime.shared.claim_index, wrap=led
        )
        self._install_signal_handlers()
        scheduler.start()
        leader.start()
        log.info(
            "factnote running in %s mode with adapters: %s",
            self.settings.mode,
            ", ".join(f"{n} ({self.settings.adapter_mode(n)})" for n in self.adapters),
        )
        self._stop.wait()
        log.info("stopping: waiting for requests in flight")
        scheduler.shutdown(wait=True)
        leader.stop()

    def _poll_now(self, scheduler: BackgroundScheduler) -> None:
        """Just elected: poll now rather than at the next interval."""
        for name in self.adapters:
            with contextlib.suppress(JobLookupError):
                scheduler.modify_job(f"poll-{name}", next_run_time=utcnow())

    def _led_job(self, leader: Leadership, fn: Callable[[], object]) -> Callable[[], None]:
        """A leader-only scheduled job (`_led`, then `_job`)."""
        return self._job(self._led(leader, fn))

    @staticmethod
    def _led(leader: Leadership, fn: Callable[[], object]) -> Callable[[], None]:
        """A leader-only job: on a standby instance it does nothing."""

        def run() -> None:
            if leader.is_leader():
                fn()

        return run

    def stop(self) -> None:
        self._stop.set()

    def _drain_until_stopped(self) -> None:
        self._step("processing requests", lambda: self.worker.drain(stop=self._stop))

    def _install_signal_handlers(self) -> None:
        def handler(signum: int, _frame: FrameType | None) -> None:
            log.info("received signal %d", signum)
            self.stop()

        signal.signal(signal.SIGINT, handler)
        signal.signal(signal.SIGTERM, handler)
