"""The review app at volume (issue 32): 10,000 drafts awaiting review beside 100,000 finished
requests, on SQLite and PostgreSQL. Measured: every review page's latency (median and p95 of
repeated requests through the app, HTML rendered), a `/metrics` scrape, and the peak memory
of `factnote report` over the whole history (its own process's maximum resident set).

The rows are the bot's: request rows shaped as the adapters' summons and posts, decisions
written by `storage.repositories.insert_decisions` (what the worker's `insert_decision`
writes, many at a time: decision, evidence, LLM calls and the running totals), one state
event per request, and the moderators' actions on rejected and approved ones. Each decision
carries a trace of three research rounds with eight search results each, failed guard
reports and drafts (about 9 kB of JSON), as a real run does.

Targets: every review page p95 <= 300 ms, `/metrics` <= 100 ms, report peak <= 400 MB. Each
page's SQL is also replayed alone (the statements one request ran, on a connection of their
own): on a loaded machine the two together tell the code's cost from the machine's.

The SQLite database is seeded once and kept under ~/.cache/factnote/bench, named by the schema
head and `SEED_VERSION` (a later run copies it); PostgreSQL is seeded afresh on a throwaway
cluster (`bench.pg_cluster`), then vacuumed and analysed as autovacuum would have.

    python -m bench review_queue
    python -m bench.review_queue --pending 2000 --finished 20000   # a quicker look
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine, event, insert, text

from adapters.base import SocialPost, Summons, TargetStatus, jsonable
from bench import pg_cluster
from bot import platforms
from bot.config import load_settings
from bot.moderation import users
from bot.web.app import create_app
from pipeline.records import (
    ClaimAnalysis,
    Decision,
    DecisionStatus,
    DocumentUse,
    Evidence,
    GuardReport,
    LLMCall,
    Platform,
    Problem,
    ProblemCode,
    RoundTrace,
    SearchResult,
    Stance,
    Tier,
    Trace,
    Verdict,
    utcnow,
)
from storage.db import Database, head_revision
from storage.models import Request, RequestEvent, ReviewAction
from storage.repositories import insert_decisions

Log = Callable[[str], None]
PENDING = 10_000
FINISHED = 100_000
REPEATS = 15
BATCH = 2_000
PASSWORD = "bench password 1"
PAGE_P95_MS = 300.0
METRICS_P95_MS = 100.0
REPORT_PEAK_MB = 400.0
# Bump when `seed` writes different rows: the cached SQLite seed is named by it.
SEED_VERSION = 1
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "factnote" / "bench"
PLATFORMS = ("x", "bluesky", "local")
# Finished requests by final state, as shares of every 20: what a review-mode bot leaves.
FINISHED_STATES = (
    ["posted"] * 6
    + ["dry_run"] * 3
    + ["abstained"] * 4
    + ["skipped"] * 3
    + ["rejected"] * 2
    + ["failed", "expired"]
)
TIER_SETS = ((Tier.HIGH, Tier.MEDIUM), (Tier.MEDIUM,), (Tier.LOW,), (Tier.LOW, Tier.UNKNOWN))
VERDICTS = (Verdict.REFUTED, Verdict.MISLEADING, Verdict.SUPPORTED, Verdict.REFUTED)


def _evidence(i: int, tier: Tier, at: datetime) -> Evidence:
    url = f"https://{tier.value}-source-{i}.example/article/{i}"
    return Evidence(
        url=url,
        title=f"What the evidence says, part {i}",
        domain=url.split("/")[2],
        tier=tier,
        stance=Stance.REFUTES,
        confidence=0.85,
        quote="The study found no effect of the remedy on the infection's course. " * 2,
        relevance=0.7,
        published=at - timedelta(days=30),
        content_hash=f"{i:064x}",
    )


def _round(n: int, evidence: list[Evidence]) -> RoundTrace:
    queries = [f"claim query {n} variant {q}" for q in range(3)]
    return RoundTrace(
        round=n,
        queries=queries,
        results=[
            SearchResult(
                url=f"https://result-{n}-{r}.example/page",
                title=f"Result {r} of round {n}",
                snippet="A snippet of the page as the search provider gave it, some words. " * 3,
                provider="local",
                query=queries[r % 3],
                rank=r,
            )
            for r in range(8)
        ],
        documents=[DocumentUse(url=e.url, tier=e.tier, used=True) for e in evidence]
        + [
            DocumentUse(
                url=f"https://result-{n}-{r}.example/page",
                tier=Tier.UNKNOWN,
                used=False,
                reason="relevance 0.21 below 0.30",
            )
            for r in range(4)
        ],
        established="What earlier rounds established, compressed for the next one. " * 3,
    )


def decision_for(platform: str, kind: int, at: datetime, status: DecisionStatus) -> Decision:
    """A decision shaped as the pipeline writes one, for the `kind`-th tier set and verdict."""
    evidence = [_evidence(kind * 10 + i, t, at) for i, t in enumerate(TIER_SETS[kind % 4])]
    reply = (
        f"No: the evidence says the remedy does not work. {evidence[0].url}"
        if status is DecisionStatus.REPLY
        else None
    )
    rules = Platform.BLUESKY if platform == "bluesky" else Platform.X
    failed = GuardReport(
        valid=False,
        platform=rules,
        length=301,
        limit=280,
        problems=[Problem(code=ProblemCode.TOO_LONG, detail="301 > 280")],
    )
    calls = [
        LLMCall(step=s, model="bench-model", ok=True, prompt_tokens=900, completion_tokens=150)
        for s in ("analyze", "judge", "write", "write")
    ]
    trace = Trace(
        analysis=ClaimAnalysis(checkable=True, claims=["The remedy cures it."], queries=["q"]),
        rounds=[_round(n, evidence) for n in (1, 2, 3)],
        llm_calls=calls,
        guard=[failed] if reply else [],
        drafts=["A longer first draft that the guard refused for its length. " * 5]
        + ([reply] if reply else []),
    )
    return Decision(
        status=status,
        verdict=VERDICTS[kind % 4] if reply else Verdict.NOT_ENOUGH_EVIDENCE,
        confidence=0.8,
        platform=rules,
        reply=reply,
        urls=[evidence[0].url] if reply else [],
        evidence=evidence if reply else [],
        reasons=["The ministry's page refutes it."] if reply else ["not_enough_evidence"],
        as_of=at,
        trace=trace,
        timings={"analyze": 1.2, "research": 6.5 + kind, "write": 2.0, "total": 10.0 + kind},
    )


def _request(i: int, state: str, at: datetime) -> dict[str, Any]:
    platform = PLATFORMS[i % 3]
    target = SocialPost(
        id=f"t{i}",
        author=f"author_{i % 997}",
        text=f"Post {i}: a claim that a home remedy cures the flu within a day, say my friends.",
        created_at=at - timedelta(minutes=30),
        url=f"https://social.example/post/{i}",
    )
    summons = Summons(
        platform=platform,
        id=f"s{i}",
        author=f"asker_{i % 499}",
        text="@factnote is this true?",
        created_at=at,
        parent_id=target.id,
        target=target,
        target_status=TargetStatus.OK,
    )
    awaiting = state == "awaiting_review"
    return {
        "platform": platform,
        "summons_id": summons.id,
        "requester": summons.author,
        "summons": jsonable(summons),
        "target": jsonable(target),
        "state": state,
        "mode": "review",
        "reason": "opted out" if state == "skipped" else "",
        "attempts": 1,
        "post_attempts": 1 if state == "posted" else 0,
        "reply_id": f"{i}" if state == "posted" else None,
        "posted_at": at + timedelta(minutes=20) if state == "posted" else None,
        "reply_text": "No: the evidence says the remedy does not work."
        if state != "skipped"
        else None,
        "review_deadline": at + timedelta(hours=24) if awaiting else None,
        "escalated_by": "mod_bench" if awaiting and i % 50 == 0 else None,
        "escalated_at": at + timedelta(minutes=5) if awaiting and i % 50 == 0 else None,
        "created_at": at,
        "updated_at": at,
    }


def _states(pending: int, finished: int) -> Iterator[str]:
    """Finished requests first (older), then the pending ones."""
    for i in range(finished):
        yield FINISHED_STATES[i % len(FINISHED_STATES)]
    for _ in range(pending):
        yield "awaiting_review"


def seed(db: Database, pending: int, finished: int, now: datetime, log: Log) -> None:
    total = pending + finished
    start = now - timedelta(days=60)
    step = timedelta(days=60) / max(1, total)
    states = list(_states(pending, finished))
    table = Request.__table__
    began = time.perf_counter()
    for first in range(0, total, BATCH):
        chunk = range(first, min(total, first + BATCH))
        rows = [_request(i, states[i], start + step * i) for i in chunk]
        with db.transaction() as session:
            ids = session.execute(
                insert(table).returning(table.c.id, sort_by_parameter_order=True), rows
            ).scalars()
            made = list(zip(ids, rows, strict=True))
            status = {
                "abstained": DecisionStatus.ABSTAIN,
                "failed": DecisionStatus.FAILED,
            }
            insert_decisions(
                session,
                [
                    (
                        rid,
                        row["platform"],
                        decision_for(
                            row["platform"],
                            rid,
                            row["created_at"],
                            status.get(row["state"], DecisionStatus.REPLY),
                        ),
                    )
                    for rid, row in made
                    if row["state"] != "skipped"
                ],
            )
            session.execute(
                insert(RequestEvent.__table__),
                [
                    {
                        "request_id": rid,
                        "at": row["created_at"] + timedelta(minutes=1),
                        "from_state": "processing",
                        "to_state": row["state"],
                        "actor": "worker:bench",
                    }
                    for rid, row in made
                ],
            )
            actions = [
                {
                    "request_id": rid,
                    "actor": "mod_bench",
                    "action": "approve" if row["state"] == "posted" else "reject",
                    "detail": {"reason": "wrong verdict"} if row["state"] == "rejected" else {},
                    "created_at": row["created_at"] + timedelta(minutes=10),
                }
                for rid, row in made
                if row["state"] in ("posted", "rejected")
            ]
            if actions:
                session.execute(insert(ReviewAction.__table__), actions)
        if first // BATCH % 10 == 0:
            log(f"  seeded {chunk.stop}/{total} ({time.perf_counter() - began:.0f} s)")


def _p95(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _timed(client: TestClient, path: str, repeats: int) -> tuple[float, float, int]:
    """(median ms, p95 ms, bytes) of `repeats` requests after one warm-up."""
    first = client.get(path, follow_redirects=False)
    if first.status_code not in (200, 303):
        raise RuntimeError(f"{path}: HTTP {first.status_code}")
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        client.get(path, follow_redirects=False)
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times), _p95(times), len(first.content)


def _statements(engine: Engine, client: TestClient, path: str) -> list[tuple[str, Any]]:
    """The SELECTs one request for `path` runs, with their parameters."""
    seen: list[tuple[str, Any]] = []

    def note(_conn: Any, _cursor: Any, statement: str, params: Any, *_: Any) -> None:
        if statement.lstrip().upper().startswith(("SELECT", "WITH")):
            seen.append((statement, params))

    event.listen(engine, "before_cursor_execute", note)
    try:
        client.get(path, follow_redirects=False)
    finally:
        event.remove(engine, "before_cursor_execute", note)
    return seen


def _sql_alone(engine: Engine, statements: list[tuple[str, Any]], repeats: int) -> float:
    """p95 ms of running a page's statements, every row fetched, on a connection of their
    own: the database's share of the page, without the app's Python."""
    raw = engine.raw_connection()
    try:
        times = []
        for _ in range(repeats):
            began = time.perf_counter()
            for statement, params in statements:
                cursor = raw.cursor()
                cursor.execute(statement, params)
                cursor.fetchall()
                cursor.close()
            times.append((time.perf_counter() - began) * 1000)
        raw.rollback()
    finally:
        raw.close()
    return _p95(times)


def _login(client: TestClient, name: str) -> None:
    page = client.get("/login").text
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert token is not None
    client.post(
        "/login",
        data={"username": name, "password": PASSWORD, "csrf_token": token.group(1)},
        follow_redirects=False,
    )


def pages(item: int) -> dict[str, str]:
    return {
        "queue": "/queue",
        "queue_newest": "/queue?order=newest",
        "queue_tier_low": "/queue?tier=low",
        "queue_verdict": "/queue?verdict=misleading&platform=x",
        "queue_requester": "/queue?requester=asker_1",
        "queue_escalated": "/queue?escalated=only",
        "queue_page_150": "/queue?page=150",
        "queue_next": "/queue/next",
        "item": f"/requests/{item}",
        "decisions": "/decisions",
        "decisions_page_2000": "/decisions?page_no=2000",
        "decisions_posted": "/decisions?state=posted",
        "decisions_verdict": "/decisions?verdict=misleading",
    }


def report_peak_mb(url: str) -> tuple[float, float]:
    """(peak resident MB, seconds) of `factnote report` in a process of its own."""
    with tempfile.TemporaryDirectory() as out:
        code = (
            "import resource, subprocess, sys\n"
            "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
        )
        env = {**os.environ, "FACTNOTE_DATABASE_URL": url}
        env.pop("FACTNOTE_CONFIG", None)
        began = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", code, sys.executable, "-m", "bot.cli", "report", "--out", out],
            check=True,
            capture_output=True,
            text=True,
            env=env,
        )
        return int(done.stdout.strip()) / 1024, time.perf_counter() - began


def cached_sqlite(folder: Path, pending: int, finished: int, log: Log) -> tuple[str, float]:
    """A seeded SQLite database in `folder` (a copy of the cached seed, made first if there is
    none for this schema head) and the seconds its seeding took, 0 when cached."""
    name = f"review_queue-{head_revision()}-v{SEED_VERSION}-{pending}-{finished}.db"
    cached = CACHE / name
    seconds = 0.0
    if not cached.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        db = Database(f"sqlite:///{partial}")
        log(f"sqlite: seeding {pending} pending and {finished} finished requests into {cached}")
        began = time.perf_counter()
        seed(db, pending, finished, utcnow(), log)
        users.add_user(db, "mod_bench", PASSWORD, "senior")
        seconds = time.perf_counter() - began
        db.dispose()  # the last connection's close folds the WAL into the file
        partial.rename(cached)
    else:
        log(f"sqlite: the seed cached in {cached}")
    copy = folder / "queue.db"
    shutil.copyfile(cached, copy)
    return f"sqlite:///{copy}", seconds


def seeded_postgres(url: str, pending: int, finished: int, log: Log) -> float:
    """Seed the empty PostgreSQL database at `url`; the seconds it took."""
    db = Database(url)
    log(f"postgresql: seeding {pending} pending and {finished} finished requests")
    began = time.perf_counter()
    seed(db, pending, finished, utcnow(), log)
    users.add_user(db, "mod_bench", PASSWORD, "senior")
    seconds = time.perf_counter() - began
    db.dispose()
    vacuum(url)
    return seconds


def vacuum(url: str) -> None:
    """VACUUM ANALYZE, as autovacuum does to a table that grew: planner statistics, and the
    visibility map that lets a count read an index alone."""
    db = Database(url)
    with db.engine.connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT").execute(text("VACUUM ANALYZE"))
    db.dispose()


def _pages(client: TestClient, engine: Engine, label: str, item: int, log: Log) -> dict[str, float]:
    numbers: dict[str, float] = {}
    worst = 0.0
    for name, path in pages(item).items():
        median, p95, size = _timed(client, path, REPEATS)
        sql = _sql_alone(engine, _statements(engine, client, path), REPEATS)
        numbers[f"{label}_{name}_p50_ms"] = round(median, 1)
        numbers[f"{label}_{name}_p95_ms"] = round(p95, 1)
        numbers[f"{label}_{name}_sql_p95_ms"] = round(sql, 1)
        worst = max(worst, p95)
        verdict = "pass" if p95 <= PAGE_P95_MS else "FAIL"
        log(
            f"  {name:20} p50 {median:7.1f} ms  p95 {p95:7.1f} ms  {verdict}"
            f"  (SQL alone p95 {sql:6.1f} ms)  {size / 1024:6.1f} kB"
        )
    numbers[f"{label}_worst_page_p95_ms"] = round(worst, 1)
    return numbers


def one_backend(url: str, label: str, pending: int, finished: int, log: Log) -> dict[str, float]:
    """Measure a database seeded by this benchmark."""
    numbers: dict[str, float] = {}
    db = Database(url)
    settings = load_settings(database_url=url, mode="review")
    app = create_app(settings, db, secret=secrets.token_hex(16))
    client = TestClient(app, client=("127.0.0.1", 50000))
    _login(client, "mod_bench")
    log(f"{label}: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    numbers.update(_pages(client, db.engine, label, finished + pending // 2, log))
    worst = numbers[f"{label}_worst_page_p95_ms"]
    metrics = TestClient(app, client=("127.0.0.1", 50001))
    median, p95, _ = _timed(metrics, "/metrics", REPEATS)
    sql = _sql_alone(db.engine, _statements(db.engine, metrics, "/metrics"), REPEATS)
    numbers[f"{label}_metrics_p50_ms"] = round(median, 1)
    numbers[f"{label}_metrics_p95_ms"] = round(p95, 1)
    numbers[f"{label}_metrics_sql_p95_ms"] = round(sql, 1)
    log(f"  /metrics             p50 {median:7.1f} ms  p95 {p95:7.1f} ms  (SQL alone {sql:.1f} ms)")
    db.dispose()
    peak, seconds = report_peak_mb(url)
    numbers[f"{label}_report_peak_mb"] = round(peak, 1)
    numbers[f"{label}_report_s"] = round(seconds, 1)
    log(f"  factnote report      peak {peak:.0f} MB in {seconds:.0f} s")
    met = {True: "pass", False: "FAIL"}
    log(
        f"  {label} targets: pages p95 <= {PAGE_P95_MS:.0f} ms {met[worst <= PAGE_P95_MS]}"
        f" (worst {worst:.0f})"
        f"; /metrics <= {METRICS_P95_MS:.0f} ms {met[p95 <= METRICS_P95_MS]}"
        f"; report <= {REPORT_PEAK_MB:.0f} MB {met[peak <= REPORT_PEAK_MB]}"
        f" (load average now {os.getloadavg()[0]:.1f})"
    )
    return numbers


def run(
    log: Log = print,
    *,
    pending: int = PENDING,
    finished: int = FINISHED,
    postgres: bool = True,
) -> dict[str, float]:
    """SQLite, then PostgreSQL on a throwaway cluster (`bench.pg_cluster`) when installed."""
    numbers: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        url, seconds = cached_sqlite(Path(folder), pending, finished, log)
        if seconds:
            numbers["sqlite_seed_s"] = round(seconds, 1)
        numbers.update(one_backend(url, "sqlite", pending, finished, log))
    if postgres and pg_cluster.available():
        with pg_cluster.cluster() as server:
            url = pg_cluster.fresh_database(server, "review_queue")
            numbers["postgresql_seed_s"] = round(seeded_postgres(url, pending, finished, log), 1)
            numbers.update(one_backend(url, "postgresql", pending, finished, log))
    return numbers


if __name__ == "__main__":
    platforms.install()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pending", type=int, default=PENDING)
    parser.add_argument("--finished", type=int, default=FINISHED)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument(
        "--seeded", help="measure this database, seeded by this benchmark before (any schema)"
    )
    args = parser.parse_args()
    if args.seeded:
        if args.seeded.startswith("postgresql"):
            vacuum(args.seeded)
        label = "postgresql" if args.seeded.startswith("postgresql") else "sqlite"
        found = one_backend(args.seeded, label, args.pending, args.finished, print)
    else:
        found = run(pending=args.pending, finished=args.finished, postgres=not args.no_postgres)
    for key, value in found.items():
        print(f"{key}: {value}")
