"""Requests on Procrastinate: many worker processes on the one PostgreSQL database.

With `[queue] backend = "procrastinate"` the scheduler (`factnote run`) polls and triages as
before but runs no checks; every request that becomes claimable (`queued`, or `retry` with its
retry time) gets a `process_request` job, and `factnote worker` processes run those jobs.

Why the job is written by a session listener (`JobWriter`, attached by `attach` to the
database's own sessions at start-up), in the same transaction as the transition:
Procrastinate can defer on a connection it is given (`configure(connection=...)`), so the job
row and the request's move to `queued` commit or roll back together. A crash can then never
leave a queued request without its job, nor a job for a request that was never queued. The
listener sees every path that queues work (triage, a lease that ran out, a retry) without
each of them knowing about the queue: every transition into `queued` or `retry` is noted by
the lifecycle (in the transaction's notes, `storage.db.TransactionNotes`), and the listener
writes their jobs in one statement just before the transaction commits (a triage batch of
hundreds costs one insert, not two queries each). A request taken in by intake is `received` until
triage decides whether it is work at all; that decision, not the intake row, is what gets the
job. (A deviation from issue 12's "intake commits the request row and its job in one
transaction": a `received` row is not work yet, and its job commits with the decision that
makes it work, so neither can exist without the other from then on.)

The lifecycle stays the safety net: a job only claims its request (the guarded, `FOR UPDATE
SKIP LOCKED` move to `processing`, with a lease renewed by heartbeat). A job for a request that
another worker holds, that is finished, or whose retry is not due is a no-op, so a job run twice
(Procrastinate's stalled-job retry after a worker died) is harmless. The periodic `recover` task
retries the jobs of workers whose heartbeat stopped, sends requests whose lease ran out back to
the queue, and gives a job to any claimable request left without one.

Procrastinate's retry strategy is for transient errors only (the database unreachable or
locked while claiming or recording): a failed check is the lifecycle's own retry (`retry`
state, `lifecycle.retry_at`), whose job is scheduled at the request's retry time.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
import psycopg_pool
from procrastinate import App, JobContext, PsycopgConnector, RetryStrategy, SyncPsycopgConnector
from procrastinate.app import WorkerOptions
from procrastinate.connector import BaseConnector
from procrastinate.schema import SchemaManager
from procrastinate.types import JSONValue

from bot import overrides
from bot.config import ConfigError, QueueConfig, Settings
from bot.ops.gc_freeze import freeze_startup_heap
from bot.requests import lifecycle
from bot.requests.worker import Claimed, Worker
from pipeline.records import utcnow
from storage import queue_jobs
from storage.db import (
    PING_AFTER_IDLE_S,
    Database,
    DatabaseBusy,
    Session,
    notes,
    retry_when_locked,
)
from storage.dialect import conninfo, is_postgres
from storage.models import RequestState

log = logging.getLogger(__name__)

PROCESS_TASK = "factnote.process_request"
RECOVER_TASK = "factnote.recover"
QUEUE = "requests"
WORKER_KEY = "factnote.worker"  # the job context's entry holding this process's Worker
# Transient: worth running the same job again a little later. Everything else is a bug or a
# decision, and the job fails (its request's lease runs out and it is queued again).
TRANSIENT_ERRORS: tuple[type[Exception], ...] = (
    DatabaseBusy,
    *queue_jobs.OPERATIONAL_ERRORS,
    psycopg.OperationalError,
)
# One schema install at a time when several workers start together.
_SCHEMA_LOCK = 0x66616374_71756575  # "factqueu"
_WAKE = (RequestState.QUEUED.value, RequestState.RETRY.value)
_CLAIMABLE = tuple(s.value for s in lifecycle.CLAIMABLE)


def uses_procrastinate(settings: Settings) -> bool:
    """Whether this deployment runs its checks on Procrastinate workers; refuses the switch
    on a database that is not PostgreSQL."""
    if settings.queue.backend != "procrastinate":
        return False
    if not is_postgres(settings.database_url):
        raise ConfigError(
            '[queue] backend = "procrastinate" needs a PostgreSQL database_url '
            "(postgresql+psycopg://...); SQLite runs with the local backend"
        )
    return True


def worker_options(cfg: QueueConfig) -> WorkerOptions:
    return WorkerOptions(
        queues=[QUEUE],
        concurrency=cfg.concurrency,
        update_heartbeat_interval=cfg.heartbeat_s,
        stalled_worker_timeout=cfg.stalled_after_s,
        shutdown_graceful_timeout=cfg.shutdown_timeout_s,
        # The request rows and their events are the record; finished jobs are clutter.
        delete_jobs="successful",
    )


def build_app(settings: Settings, connector: BaseConnector | None = None) -> App:
    """The Procrastinate app on the deployment's database, for running jobs (`connector`:
    tests pass Procrastinate's in-memory one)."""
    cfg = settings.queue
    app = App(
        connector=connector or _connector(settings.database_url),
        worker_defaults=worker_options(cfg),
    )
    retry = RetryStrategy(
        max_attempts=settings.runtime.db_lock_attempts,
        exponential_wait=2,
        retry_exceptions=set(TRANSIENT_ERRORS),
    )
    app.task(name=PROCESS_TASK, queue=QUEUE, pass_context=True, retry=retry)(process_request)
    recover_task = app.task(
        # A queueing lock, not a lock: a lock on a periodic task can leave it stuck
        # (procrastinate issue #1408); one pending run is all that is needed.
        name=RECOVER_TASK,
        queue=QUEUE,
        pass_context=True,
        queueing_lock=RECOVER_TASK,
    )(recover)
    # Every worker defers it; the database keeps one job per tick.
    app.periodic(cron=f"* * * * * */{cfg.recover_every_s}")(recover_task)
    return app


def _connector(database_url: str) -> PsycopgConnector:
    pool = _QueuePool(PING_AFTER_IDLE_S)
    return PsycopgConnector(
        conninfo=conninfo(database_url), configure=pool.configure, pool_factory=pool.make
    )


class _QueuePool:
    """Procrastinate's connection pool, made cheaper per job (issue 12):

    - autocommit: each checkout runs one statement (a job's fetch or finish is one SQL
      function), so a transaction of its own buys nothing but a BEGIN and a COMMIT round trip.
      Set in `configure`, not the pool's `kwargs`: Procrastinate passes `autocommit=True`
      itself to its LISTEN connection, which would then get it twice.
    - the liveness check Procrastinate gives the pool (a round trip before every checkout)
      only for a connection idle `idle_s` or longer, as `storage.db.ping_when_idle` does for
      the runtime's own. The price: after a server restart, a connection used in the last
      `idle_s` fails its next query instead of being replaced at checkout. A failed job
      finish leaves the job to the stalled-job retry; a failed fetch ends the worker process
      (Procrastinate re-raises it), which docker-compose.yml restarts (`restart:
      unless-stopped`) - as a fetch in flight during the restart would anyway."""

    def __init__(self, idle_s: float) -> None:
        self.idle_s = idle_s
        self._last_used: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()

    def make(self, **kwargs: Any) -> psycopg_pool.AsyncConnectionPool:
        kwargs.update(check=self.check, reset=self.reset)
        return psycopg_pool.AsyncConnectionPool(**kwargs)

    async def configure(self, connection: psycopg.AsyncConnection[Any]) -> None:
        await connection.set_autocommit(True)
        self._last_used[connection] = time.monotonic()

    async def reset(self, connection: psycopg.AsyncConnection[Any]) -> None:
        self._last_used[connection] = time.monotonic()

    async def check(self, connection: psycopg.AsyncConnection[Any]) -> None:
        if time.monotonic() - self._last_used.get(connection, 0.0) >= self.idle_s:
            await psycopg_pool.AsyncConnectionPool.check_connection(connection)


def enqueuer(settings: Settings) -> App:
    """The app that defers jobs from synchronous code on a session's own connection. A
    synchronous connector of its own, never opened: it only writes on the connections it is
    given (the worker's async connector cannot use a synchronous connection)."""
    return build_app(settings, SyncPsycopgConnector(conninfo=conninfo(settings.database_url)))


def enqueue_from(db: Database, settings: Settings) -> None:
    """Make `db` enqueue as it queues requests (`attach`) when this deployment uses
    Procrastinate; nothing for the local backend."""
    if uses_procrastinate(settings):
        ensure_schema(settings.database_url)
        attach(db, enqueuer(settings))


@dataclass
class WorkerContext:
    """What a job needs from its process: the worker (the pipeline, loaded once)."""

    worker: Worker
    stalled_after_s: float


def _context(context: JobContext) -> WorkerContext:
    found = context.additional_context.get(WORKER_KEY)
    if not isinstance(found, WorkerContext):
        raise RuntimeError("a factnote job ran outside `factnote worker` (no worker context)")
    return found


def process_request(context: JobContext, request_id: int) -> str:
    """Check one request through the lifecycle. What it did, for Procrastinate's log."""
    worker = _context(context).worker
    if not claim_request(worker, request_id):
        return "not claimable (finished, held by another worker, or not due)"
    worker.process(request_id)
    return "processed"


def claim_request(worker: Worker, request_id: int, now: datetime | None = None) -> bool:
    """Move this one request to `processing` for `worker`, as `lifecycle.claim` does for the
    oldest one. False when it is not claimable now."""
    moment = now or utcnow()
    lease_s = worker.settings.runtime.lease_s
    with worker.db.transaction() as session:
        free = queue_jobs.claimable(session, request_id, _CLAIMABLE, moment)
        held = [lifecycle.Held(row.id, row.state, row.platform) for row in free]
        moved = lifecycle.claim_rows(session, held, worker.name, lease_s, moment)
        if moved:
            [row] = free
            mode = overrides.live_mode_from(
                worker.settings, row.platform, row.own_mode, row.global_mode
            )
            read = Claimed(row.summons, row.platform, row.reused_from_id, row.attempts + 1, mode)
            worker.claimed(session, request_id, read)
    if moved:
        worker.hold(request_id)
    return bool(moved)


async def recover(context: JobContext, timestamp: int) -> str:
    """Run again the jobs of workers whose heartbeat stopped, queue again the requests whose
    lease ran out, and give a job to any claimable request left without one."""
    found = _context(context)
    manager = context.app.job_manager
    stalled = list(await manager.get_stalled_jobs(seconds_since_heartbeat=found.stalled_after_s))
    for job in stalled:
        await manager.retry_job(job)
    requeued, orphans = await asyncio.to_thread(requeue_and_sweep, found.worker)
    return (
        f"{len(stalled)} stalled job(s) retried, {requeued} lease(s) expired, {orphans} orphan(s)"
    )


def requeue_and_sweep(worker: Worker) -> tuple[int, int]:
    requeued = worker.recover()  # each goes back to `queued`, and gets its job, in one commit
    orphans = 0
    if is_postgres(worker.db.url):
        orphans = retry_when_locked(
            lambda: _sweep(worker.db), what="giving jobs to orphaned requests"
        )
    return requeued, orphans


def _sweep(db: Database) -> int:
    """Claimable requests without a pending job (queued before this backend was switched on,
    or a job that ran before its retry was due) get one."""
    writer = attached(db)
    if writer is None:
        return 0
    with db.transaction() as session:
        due = queue_jobs.orphans(session, PROCESS_TASK)
        writer.defer(session, due)
    return len(due)


# -- enqueueing in the transaction that queues the request ------------------------------------

Deferrer = Callable[[Session, Iterable[tuple[int, datetime | None]]], None]


@dataclass(frozen=True, eq=False)
class JobWriter:
    """The jobs of the requests a transaction queued, written just before it commits: one
    statement for a whole triage batch instead of two per request (issue 12). `attach` runs
    it before every commit of a database's sessions; calling it earlier writes the jobs noted
    so far."""

    defer: Deferrer

    def __call__(self, session: Session) -> None:
        session.flush()  # the last state changes are written, for the check below
        found = notes(session)
        woken, found.woken = found.woken, set()
        if not woken:
            return
        # Only requests still waiting: a savepoint rolled back may have undone a move.
        self.defer(session, queue_jobs.still_waiting(session, woken, _WAKE))


def attach(db: Database, app: App) -> JobWriter:
    """From now on, every transaction on `db` that moves a request to `queued` or `retry`
    also writes its job (scheduled at the request's retry time), on the same connection."""
    task = app.tasks[PROCESS_TASK]
    postgres = is_postgres(db.url)

    def defer(session: Session, due: Iterable[tuple[int, datetime | None]]) -> None:
        # The session's own psycopg connection: the job commits with the transition.
        # (SQLite has no job table; there only tests, with the in-memory connector, attach.)
        connection = session.connection().connection.driver_connection if postgres else None
        by_time: dict[datetime | None, list[int]] = {}
        for request_id, at in due:
            by_time.setdefault(at, []).append(request_id)
        for at, ids in by_time.items():  # one statement per retry time, not one per request
            kwargs: list[dict[str, JSONValue]] = [{"request_id": i} for i in ids]
            task.configure(connection=connection, schedule_at=at).batch_defer(*kwargs)

    detach(db)
    writer = JobWriter(defer)
    db.add_before_commit(writer)
    return writer


def attached(db: Database) -> JobWriter | None:
    """The job writer `attach` gave `db`, if any."""
    return next((h for h in db.before_commit_hooks() if isinstance(h, JobWriter)), None)


def detach(db: Database) -> None:
    writer = attached(db)
    if writer is not None:
        db.remove_before_commit(writer)


# -- schema -------------------------------------------------------------------------------


def ensure_schema(database_url: str) -> bool:
    """Install Procrastinate's tables in the database unless they are there (not an Alembic
    migration: they are Procrastinate's, versioned with it). True when installed now."""
    with psycopg.connect(conninfo(database_url), autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_SCHEMA_LOCK,))
        try:
            row = conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
            if row is not None and row[0] is not None:
                return False
            with conn.transaction():
                conn.execute(SchemaManager.get_schema())
            log.info("installed the Procrastinate schema")
            return True
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_SCHEMA_LOCK,))


def run_worker(app: App, worker: Worker, cfg: QueueConfig, **options: Any) -> None:
    """Run jobs until SIGINT/SIGTERM (Procrastinate's handlers: jobs in flight finish within
    `shutdown_timeout_s`)."""
    context = WorkerContext(worker=worker, stalled_after_s=cfg.stalled_after_s)
    freeze_startup_heap()  # the pipeline is loaded: collections skip it from now
    app.run_worker(additional_context={WORKER_KEY: context}, **options)
