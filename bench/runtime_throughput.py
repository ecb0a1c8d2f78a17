"""Runtime throughput, on SQLite and on PostgreSQL (issue 12): intake + triage (summons/s into
requests, no LLM), the runtime's own overhead per request with the pipeline replaced by a no-op
(intake, triage, claim, lifecycle events, decision record, posting, outbox), and drain
(requests/s end to end on SQLite with a zero-latency fake LLM).

Intake reads a local inbox of N summons (distinct authors and claims, so no triage rule
short-circuits), stores them as requests in one insert, advances the cursor, and
triages them all; on PostgreSQL the deployment's queue is attached, so triage writes each
queued request's Procrastinate job in its transaction, as it does in production.

The no-op run answers every check at once with a fixed reply (`NoopChecker`, a bench-side
stand-in for `pipeline.check.Checker` at its interface) in live mode on the local adapter,
so every request is claimed, decided, posted to the outbox and logged as events: what is
left is the runtime's cost. On SQLite the bot's own worker claims; on PostgreSQL a
Procrastinate worker (bot/ops/queue.py) runs the jobs triage deferred, in this process.
`--profile` runs only the PostgreSQL no-op, under cProfile, and prints where its CPU goes
(`Profiles`: the event loop's thread and the job threads apart).

Drain runs the real pipeline per request (claim analysis, local-index search over the test
corpus, fetch from the index, embeddings, evidence extraction, writing, guard, logging) with
every LLM answer returned at once by the fake server: SQLite writes, embeddings, HTTP to the
LLM server, JSON validation. Worker processes on PostgreSQL: bench/queue_throughput.py.
"""

from __future__ import annotations

import cProfile
import io
import json
import pstats
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast

from sqlalchemy import Engine, event, func, select

from adapters.local import LocalAdapter
from bench import pg_cluster
from bot import platforms
from bot.config import Settings, load_settings
from bot.ops.gc_freeze import freeze_startup_heap
from bot.ops.queue import build_app, enqueue_from, run_worker
from bot.ops.runtime import open_runtime
from bot.requests.intake import poll
from bot.requests.triage import triage_pending
from bot.requests.worker import Worker
from pipeline.check import Checker
from pipeline.records import Decision, DecisionStatus, Platform, Post, Verdict, utcnow
from storage.db import Database
from storage.models import Request, RequestState
from testing.fakes.openai_server import FakeLLM
from testing.scenarios import TIERS, build_index, script_happy_path

Log = Callable[[str], None]
OLD = datetime(2026, 11, 29, 9, 0)  # the summons date the drain's fixture world expects


def inbox(folder: Path, count: int, first: int = 0, created: datetime = OLD) -> Path:
    """A local inbox of `count` summons (ids from 10000 + `first`), each by its own author
    about its own claim, so no triage rule short-circuits."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(first, first + count):
        lines.append(
            json.dumps(
                {
                    "id": str(10_000 + i),
                    "author": f"bench_user_{i}",
                    "text": "@factnote is this true?",
                    "created_at": f"{created:%Y-%m-%dT%H:%M:%S}Z",
                    "parent": {
                        "id": f"p{i}",
                        "author": "claimer_demo",
                        "text": f"Drinking hot lemon water every hour kills the flu, claim {i}.",
                        "created_at": f"{created - timedelta(hours=1):%Y-%m-%dT%H:%M:%S}Z",
                    },
                    "quoted": None,
                    "images": [],
                }
            )
        )
    path = folder / "inbox.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _settings(tmp: Path, inbox_path: Path, database_url: str | None = None) -> Settings:
    settings = load_settings(
        database_url=database_url or f"sqlite:///{tmp / 'bench.db'}",
        index_path=str(tmp / "index.sqlite"),
    )
    settings.local.inbox = str(inbox_path)
    settings.local.outbox = str(tmp / "outbox.jsonl")
    settings.runtime.per_user_hourly = 10**6
    settings.runtime.global_hourly = 10**6
    # The summons carry fixed dates; the age limit would skip them all.
    settings.runtime.max_summons_age_s = 0
    settings.credibility.overrides = dict(TIERS)
    if database_url and database_url.startswith("postgresql"):
        settings.queue.backend = "procrastinate"
        settings.queue.concurrency = 1
    return settings


@contextmanager
def _databases(postgres: bool) -> Iterator[Callable[[str], str | None]]:
    """A maker of fresh databases by name: on a throwaway PostgreSQL cluster, or None (each
    run then uses a SQLite file in its own temporary directory)."""
    if not postgres:
        yield lambda _name: None
        return
    with pg_cluster.cluster() as server:
        yield lambda name: pg_cluster.fresh_database(server, name)


@contextmanager
def _counting(engine: Engine) -> Iterator[dict[str, int]]:
    """SQL statements (an executemany counts once), commits and connections taken from the
    pool (a session's, or a read's of its own) through `engine` meanwhile: the runtime's round
    trips. Procrastinate's own queries (fetching and finishing jobs) run on its connector and
    are not counted."""
    counts = {"statements": 0, "commits": 0, "checkouts": 0}
    listeners = {
        "before_cursor_execute": lambda *_: _bump(counts, "statements"),
        "commit": lambda *_: _bump(counts, "commits"),
        "checkout": lambda *_: _bump(counts, "checkouts"),
    }
    for name, listener in listeners.items():
        event.listen(engine, name, listener)
    try:
        yield counts
    finally:
        for name, listener in listeners.items():
            event.remove(engine, name, listener)


def _bump(counts: dict[str, int], key: str) -> None:
    counts[key] += 1


def _skipped(db: Database) -> int:
    with db.session() as session:
        return (
            session.scalar(
                select(func.count())
                .select_from(Request)
                .where(Request.state == RequestState.SKIPPED.value)
            )
            or 0
        )


def intake(count: int = 2000, database_url: str | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as raw:
        tmp = Path(raw)
        settings = _settings(tmp, inbox(tmp / "in", count), database_url)
        db = Database(settings.database_url)
        enqueue_from(db, settings)  # PostgreSQL: triage defers each queued request's job
        adapter = LocalAdapter(settings.local.inbox, settings.local.outbox)
        freeze_startup_heap()  # as `factnote run` and `factnote worker` do before taking work
        with _counting(db.engine) as counts:
            cpu = time.process_time()
            start = time.perf_counter()
            result = poll(adapter, db, "dry-run")
            polled = time.perf_counter()
            triaged = triage_pending(db, settings.runtime, {"local": "factnote"})
            end = time.perf_counter()
            cpu = time.process_time() - cpu
        skipped = _skipped(db)
        db.dispose()
    assert result.new == count and triaged == count
    if skipped:  # triage's fast path would be measured instead of the real one
        raise RuntimeError(f"intake bench: triage skipped {skipped} of {count} summons")
    return {
        "intake_summons": count,
        "intake_per_s": round(count / (polled - start), 1),
        "triage_per_s": round(count / (end - polled), 1),
        "intake_and_triage_per_s": round(count / (end - start), 1),
        # This process's CPU time: on a shared machine the rate above is the load's too.
        "intake_and_triage_cpu_ms_per_summons": round(1000 * cpu / count, 3),
        "intake_and_triage_statements_per_summons": round(counts["statements"] / count, 3),
    }


class NoopChecker:
    """The pipeline replaced by a no-op at `Checker.check`'s interface: a fixed reply at once,
    distinct per post (a repeated reply would be rewritten by the no-repeat rule instead)."""

    def __init__(self) -> None:
        self.calls = 0

    def check(self, post: Post, platform: Platform = Platform.X, **_: Any) -> Decision:
        self.calls += 1
        return Decision(
            status=DecisionStatus.REPLY,
            verdict=Verdict.REFUTED,
            confidence=0.9,
            platform=platform,
            reply=f"No evidence supports this ({post.id}).",
            as_of=utcnow(),
        )


def noop(
    count: int = 300, database_url: str | None = None, profile: Profiles | None = None
) -> dict[str, Any]:
    """Requests/s through the runtime with a no-op pipeline, live on the local adapter, after
    one warm-up request (lazy imports, connections, the queue's schema). `profile`: profile
    the measured round (`Profiles`)."""
    with tempfile.TemporaryDirectory() as raw:
        tmp = Path(raw)
        warm = inbox(tmp / "warm", 1, first=count, created=utcnow())
        settings = _settings(tmp, warm, database_url)
        settings.mode = "live"
        db = Database(settings.database_url)
        enqueue_from(db, settings)
        checker = NoopChecker()
        _noop_round(settings, db, checker, warm, age=True)
        freeze_startup_heap()
        with _counting(db.engine) as counts:
            cpu = time.process_time()
            start, triaged, end = _noop_round(
                settings, db, checker, inbox(tmp / "in", count, created=utcnow()), profile=profile
            )
            cpu = time.process_time() - cpu
        with db.session() as session:
            posted = session.scalar(
                select(func.count())
                .select_from(Request)
                .where(Request.state == RequestState.POSTED.value)
            )
        db.dispose()
        replies = len(LocalAdapter(warm, settings.local.outbox).replies())
    if not posted == replies == checker.calls == count + 1:
        raise RuntimeError(f"noop bench: {posted} posted, {replies} replies of {count + 1}")
    return {
        "noop_requests": count,
        "noop_per_s": round(count / (end - start), 1),
        "noop_drain_per_s": round(count / (end - triaged), 1),
        "noop_ms_per_request": round(1000 * (end - start) / count, 2),
        "noop_cpu_ms_per_request": round(1000 * cpu / count, 2),
        # Intake and triage included (a batch's share each); the lease heartbeat's too.
        "noop_statements_per_request": round(counts["statements"] / count, 2),
        "noop_commits_per_request": round(counts["commits"] / count, 2),
        "noop_checkouts_per_request": round(counts["checkouts"] / count, 2),
    }


def _noop_round(
    settings: Settings,
    db: Database,
    checker: NoopChecker,
    path: Path,
    age: bool = False,
    profile: Profiles | None = None,
) -> tuple[float, float, float]:
    """Take in, triage and run every summons of the inbox at `path`: when it started, when
    triage was done, when the last request was posted. `age`: make the database a day older
    than the summons it took in, before anything is posted."""
    adapter = LocalAdapter(path, settings.local.outbox)
    worker = Worker(settings, db, cast(Checker, checker), {"local": adapter})
    start = time.perf_counter()
    poll(adapter, db, "live")
    if age:
        # The steady state: a database older than the summons it takes in. A backlog older
        # than the database is first looked up on the platform before posting
        # (bot/requests/posting.py), which is not what is measured here.
        with db.transaction() as session:
            for request in session.scalars(select(Request)):
                request.created_at = utcnow() - timedelta(days=1)
    triage_pending(db, settings.runtime, {"local": "factnote"})
    triaged = time.perf_counter()
    if settings.queue.backend == "procrastinate":
        # Runs the jobs triage deferred and returns once the queue is empty.
        options: dict[str, Any] = {"wait": False}
        if profile is not None:
            options["task_middleware"] = [profile.job]
        with profile.main() if profile else nullcontext():
            run_worker(build_app(settings), worker, settings.queue, **options)
    else:
        worker.drain(workers=1)
    end = time.perf_counter()
    worker.stop()
    return start, triaged, end


class Profiles:
    """cProfile of the PostgreSQL no-op round: the event loop's thread (Procrastinate's fetch
    and finish, intake, triage) and, apart, the worker threads its synchronous jobs run in
    (cProfile sees only the thread it is enabled in; `job` is a task middleware, run in the
    job's thread). Jobs run one at a time (concurrency 1), so one profile holds them all."""

    def __init__(self) -> None:
        self.loop = cProfile.Profile()
        self.jobs = cProfile.Profile()
        self.job_cpu_s = 0.0
        self.job_count = 0

    @contextmanager
    def main(self) -> Iterator[None]:
        self.loop.enable()
        try:
            yield
        finally:
            self.loop.disable()

    def job(self, call_next: Callable[[], Any], *_: Any) -> Any:
        cpu = time.thread_time()
        self.jobs.enable()
        try:
            return call_next()
        finally:
            self.jobs.disable()
            self.job_cpu_s += time.thread_time() - cpu
            self.job_count += 1

    def report(self, top: int = 15) -> str:
        out = io.StringIO()
        per_job = 1000 * self.job_cpu_s / max(self.job_count, 1)
        out.write(f"jobs: {self.job_count}, job-thread CPU {per_job:.2f} ms/job (profiled)\n")
        for name, found in (("event loop thread", self.loop), ("job threads", self.jobs)):
            for key in ("tottime", "cumtime"):
                out.write(f"--- {name}, top {top} by {key}\n")
                pstats.Stats(found, stream=out).sort_stats(key).print_stats(top)
        return out.getvalue()


def drain(count: int = 60, workers: int = 2) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as raw, FakeLLM(delay_s=0.0) as fake:
        tmp = Path(raw)
        script_happy_path(fake)
        build_index(f"sqlite:///{tmp / 'bench.db'}")
        settings = _settings(tmp, inbox(tmp / "in", count))
        settings.llm = fake.config()
        settings.runtime.workers = workers
        with open_runtime(settings) as runtime:
            adapter = LocalAdapter(settings.local.inbox, settings.local.outbox)
            poll(adapter, runtime.db, "dry-run")
            triage_pending(runtime.db, settings.runtime, {"local": "factnote"})
            worker = Worker(settings, runtime.db, runtime.checker, {"local": adapter})
            first = worker.claim_next()
            if first is None:
                raise RuntimeError("drain bench: triage queued nothing to process")
            worker.process(first)  # warm-up: model and caches loaded
            start = time.perf_counter()
            done = worker.drain()
            elapsed = time.perf_counter() - start
        calls = len(fake.requests)
    return {
        "drain_requests": done,
        "drain_workers": workers,
        "drain_per_s": round(done / elapsed, 2),
        "drain_ms_per_request": round(1000 * elapsed / max(done, 1), 1),
        "drain_llm_calls": calls,
    }


def run(quick: bool = False, postgres: bool = True, log: Log = print) -> dict[str, Any]:
    """Every number, prefixed by backend (`sqlite_`, `postgres_`); PostgreSQL is left out
    when asked or when its binaries are missing (said in the log)."""
    backends = ["sqlite"]
    if postgres and pg_cluster.available():
        backends.append("postgres")
    elif postgres:
        log(f"runtime_throughput: no PostgreSQL binaries in {pg_cluster.PG_BIN}; SQLite only")
    numbers: dict[str, Any] = {}

    def note(part: str, found: dict[str, Any]) -> None:
        log(f"{part}: " + ", ".join(f"{k}={v}" for k, v in found.items()))
        numbers.update({f"{part.split()[0]}_{k}": v for k, v in found.items()})

    for backend in backends:
        with _databases(backend == "postgres") as fresh:
            note(f"{backend} intake", intake(200 if quick else 2000, fresh("intake")))
            note(f"{backend} noop", noop(20 if quick else 300, fresh("noop")))
    note("sqlite drain", drain(6 if quick else 60))
    return numbers


def profile_postgres_noop(count: int = 200, top: int = 15, log: Log = print) -> None:
    """The PostgreSQL no-op round under cProfile: where its CPU goes (`--profile`)."""
    found = Profiles()
    with _databases(True) as fresh:
        log(f"postgres noop (profiled): {noop(count, fresh('noop'), found)}")
    log(found.report(top))


if __name__ == "__main__" and "--profile" in sys.argv:
    profile_postgres_noop()
elif __name__ == "__main__":
    platforms.install()
    chosen = run(quick="--quick" in sys.argv, postgres="--sqlite" not in sys.argv)
    for key, value in chosen.items():
        print(f"{key}: {value}")
