"""Runtime throughput: intake + triage (summons/s into requests on SQLite, no LLM), and drain
(requests/s end to end on this machine with a zero-latency fake LLM).

Intake reads a local inbox of N summons (distinct authors and claims, so no triage rule
short-circuits), stores each as a request in its own savepoint, advances the cursor, and
triages them all. Drain runs the real pipeline per request (claim analysis, local-index search
over the test corpus, fetch from the index, embeddings, evidence extraction, writing, guard,
logging) with every LLM answer returned at once by the fake server, so what is measured is our
own overhead: SQLite writes, embeddings, HTTP to the LLM server, JSON validation.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

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
        build_index(tmp / "index.sqlite")
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


def run(quick: bool = False) -> dict[str, Any]:
    numbers = intake(200 if quick else 2000)
    numbers.update(drain(6 if quick else 60))
    return numbers


if __name__ == "__main__":
    for key, value in run().items():
        print(f"{key}: {value}")
