"""Runtime throughput: intake + triage (summons/s into requests on SQLite, no LLM), and drain
(requests/s end to end on this machine with a zero-latency fake LLM).

Intake reads a local inbox of N summons (distinct authors and claims, so no triage rule
short-circuits), stores each as a request in its own savepoint, advances the cursor, and
triages them all. Drain runs the real pipeline per request (claim analysis, local-index search
over the test corpus, fetch from the index, embeddings, evidence extraction, writing, guard,
logging) with every LLM answer returned at once by the fake server, so what is measured is our
own overhead: SQLite writes, embeddings, HTTP to the LLM server, JSON validation.

`python -m bench.runtime_throughput --processes` (not part of `run`: minutes, and PostgreSQL
binaries): the same drain on PostgreSQL with 1, 2 and 4 `factnote worker` processes on the
Procrastinate backend, with a fake LLM answering at once and one taking 1.5 s per call.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import bindparam, create_engine, func, select, text

from adapters.local import LocalAdapter
from bot.config import Settings, load_settings
from bot.intake import poll
from bot.runtime import open_runtime
from bot.triage import triage_pending
from bot.worker import Worker
from storage.db import Database
from storage.models import Request, RequestState
from testing.fakes.openai_server import FakeLLM
from testing.scenarios import TIERS, build_index, script_happy_path


def _inbox(folder: Path, count: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(count):
        lines.append(
            json.dumps(
                {
                    "id": str(10_000 + i),
                    "author": f"bench_user_{i}",
                    "text": "@factnote is this true?",
                    "created_at": "2026-11-29T09:00:00Z",
                    "parent": {
                        "id": f"p{i}",
                        "author": "claimer_demo",
                        "text": f"Drinking hot lemon water every hour kills the flu, claim {i}.",
                        "created_at": "2026-11-29T08:00:00Z",
                    },
                    "quoted": None,
                    "images": [],
                }
            )
        )
    path = folder / "inbox.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _settings(tmp: Path, inbox: Path) -> Settings:
    settings = load_settings(
        database_url=f"sqlite:///{tmp / 'bench.db'}", index_path=str(tmp / "index.sqlite")
    )
    settings.local.inbox = str(inbox)
    settings.local.outbox = str(tmp / "outbox.jsonl")
    settings.runtime.per_user_hourly = 10**6
    settings.runtime.global_hourly = 10**6
    # The summons carry fixed dates; the age limit would skip them all.
    settings.runtime.max_summons_age_s = 0
    settings.credibility.overrides = dict(TIERS)
    return settings


def intake(count: int = 2000) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as raw:
        tmp = Path(raw)
        settings = _settings(tmp, _inbox(tmp / "in", count))
        db = Database(settings.database_url)
        adapter = LocalAdapter(settings.local.inbox, settings.local.outbox)
        start = time.perf_counter()
        result = poll(adapter, db, "dry-run")
        polled = time.perf_counter()
        triaged = triage_pending(db, settings.runtime, {"local": "factnote"})
        end = time.perf_counter()
        with db.session() as session:
            skipped = session.scalar(
                select(func.count())
                .select_from(Request)
                .where(Request.state == RequestState.SKIPPED.value)
            )
        db.dispose()
    assert result.new == count and triaged == count
    if skipped:  # triage's fast path would be measured instead of the real one
        raise RuntimeError(f"intake bench: triage skipped {skipped} of {count} summons")
    return {
        "intake_summons": count,
        "intake_per_s": round(count / (polled - start), 1),
        "triage_per_s": round(count / (end - polled), 1),
        "intake_and_triage_per_s": round(count / (end - start), 1),
    }


def drain(count: int = 60, workers: int = 2) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as raw, FakeLLM(delay_s=0.0) as fake:
        tmp = Path(raw)
        script_happy_path(fake)
        build_index(f"sqlite:///{tmp / 'bench.db'}")
        settings = _settings(tmp, _inbox(tmp / "in", count))
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


# -- drain with 1, 2, 4 `factnote worker` processes on PostgreSQL (issue 12) ----------------

PG_BIN = Path(os.environ.get("FACTNOTE_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))
TERMINAL = ("dry_run", "abstained", "skipped", "failed", "needs_llm", "posted")


@contextmanager
def _cluster() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on a free loopback port (as tests/postgres.py starts
    one); yields its server URL."""
    root = Path(tempfile.mkdtemp(prefix="factnote-bench-pg-"))
    owner = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if owner:
        shutil.chown(root, user="postgres", group="postgres")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    data = root / "data"
    subprocess.run(
        [
            *owner,
            str(PG_BIN / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "-A",
            "trust",
            "--no-sync",
        ],
        check=True,
        capture_output=True,
    )
    options = f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c max_connections=200"
    subprocess.run(
        [
            *owner,
            str(PG_BIN / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(root / "log"),
            "-o",
            options,
            "-w",
            "start",
        ],
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}"
    finally:
        subprocess.run(
            [*owner, str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
            check=False,
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


def _fresh_database(server: str, name: str) -> str:
    admin = create_engine(f"{server}/postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return f"{server}/{name}"


def _queue_config(tmp: Path, url: str, inbox: Path, concurrency: int) -> Path:
    tiers = "\n".join(f'"{domain}" = "{tier}"' for domain, tier in TIERS.items())
    config = tmp / "factnote.toml"
    config.write_text(
        f'''database_url = "{url}"
[local]
inbox = "{inbox}"
outbox = "{tmp / "outbox.jsonl"}"
[runtime]
per_user_hourly = 1000000
global_hourly = 1000000
max_summons_age_s = 0
[queue]
backend = "procrastinate"
concurrency = {concurrency}
[credibility.overrides]
{tiers}
''',
        encoding="utf-8",
    )
    return config


def _drain_with(
    server: str, name: str, processes: int, fake: FakeLLM, count: int, concurrency: int
) -> float:
    """Requests/s from the first claim to the last finished request, the workers started
    (and registered) before anything was enqueued, so process start-up is not counted."""
    url = _fresh_database(server, name)
    build_index(url)  # migrates the database too, before any worker opens it
    with tempfile.TemporaryDirectory() as raw:
        tmp = Path(raw)
        config = _queue_config(tmp, url, _inbox(tmp / "in", count), concurrency)
        env = {
            **os.environ,
            "FACTNOTE_LLM_BASE_URL": fake.base_url,
            "FACTNOTE_LLM_MODEL": "fake-model",
            "HF_HUB_OFFLINE": "1",
        }
        factnote = [sys.executable, "-m", "bot.cli", "--config", str(config)]
        workers = [
            subprocess.Popen([*factnote, "worker"], env=env, stderr=subprocess.DEVNULL)
            for _ in range(processes)
        ]
        engine = create_engine(url)
        try:
            _wait(engine, "SELECT count(*) FROM procrastinate_workers", processes, 600)
            subprocess.run([*factnote, "run", "--once"], env=env, check=False, capture_output=True)
            _wait(engine, "SELECT count(*) FROM requests WHERE state IN :done", count, 1800)
            with engine.connect() as conn:
                first, last = conn.execute(
                    text(
                        "SELECT min(at) FILTER (WHERE reason = 'claimed'), "
                        "max(at) FILTER (WHERE to_state IN :done) FROM request_events"
                    ).bindparams(bindparam("done", expanding=True)),
                    {"done": list(TERMINAL)},
                ).one()
        finally:
            for proc in workers:
                proc.send_signal(signal.SIGTERM)
            for proc in workers:
                proc.wait(timeout=120)
            engine.dispose()
    return float(count / (last - first).total_seconds())


def _wait(engine: Any, query: str, target: int, timeout_s: float) -> None:
    statement = text(query)
    if ":done" in query:
        statement = statement.bindparams(bindparam("done", expanding=True))
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            try:
                found = conn.execute(statement, {"done": list(TERMINAL)}).scalar_one()
            except Exception:  # the queue's tables are not installed yet
                found = 0
        if found >= target:
            return
        time.sleep(0.5)
    raise RuntimeError(f"queue bench: {query} stayed below {target} for {timeout_s:.0f}s")


def drain_processes(
    count: int = 40,
    processes: tuple[int, ...] = (1, 2, 4),
    delays: tuple[float, ...] = (0.0, 1.5),
    concurrency: int = 4,
) -> dict[str, Any]:
    """Drain throughput on PostgreSQL with `processes` worker processes, for a fake LLM that
    answers at once and one that takes `delay` s per call: requests/s and the ratio to one
    worker process."""
    numbers: dict[str, Any] = {"queue_requests": count, "queue_concurrency": concurrency}
    with _cluster() as server:
        for delay in delays:
            with FakeLLM(delay_s=delay) as fake:
                script_happy_path(fake)
                base = 0.0
                for n in processes:
                    name = f"bench_{int(delay * 1000)}ms_{n}"
                    rate = _drain_with(server, name, n, fake, count, concurrency)
                    base = base or rate
                    key = f"queue_llm{delay:g}s_{n}w"
                    numbers[f"{key}_per_s"] = round(rate, 2)
                    numbers[f"{key}_ratio"] = round(rate / base, 2)
                    print(
                        f"{key}: {rate:.2f} requests/s ({rate / base:.2f}x one worker)", flush=True
                    )
    return numbers


def run(quick: bool = False) -> dict[str, Any]:
    numbers = intake(200 if quick else 2000)
    numbers.update(drain(6 if quick else 60))
    return numbers


if __name__ == "__main__":
    # `--processes`: the PostgreSQL multi-process drain (minutes; needs PostgreSQL binaries).
    chosen = drain_processes() if "--processes" in sys.argv else run()
    for key, value in chosen.items():
        print(f"{key}: {value}")
