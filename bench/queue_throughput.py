"""Drain throughput on PostgreSQL with 1, 2 and 4 `factnote worker` processes (issue 12), for a
fake LLM that answers at once and one that takes 1.5 s per call: requests/s and the ratio to
one worker process.

"N workers" means N processes running one request each (`[queue] concurrency = 1`), so the
ratio measures what adding processes gives. A process can also overlap its own LLM waits
(concurrency > 1); one process at concurrency 4 is measured beside them for comparison.

Each run gets a fresh database; its workers are started and given one warm-up request per
slot (model and caches loaded) before the measured batch is enqueued, and the rate is
counted from the batch's first claim to its last finished request, from the event log. With
the 1.5 s LLM the work is waiting, so processes should scale nearly linearly; with the
zero-latency LLM it is CPU (embeddings), bounded by the machine's cores (`cpu_count` and the
load average are reported beside the numbers).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, bindparam, create_engine, text

from bench import pg_cluster
from bench.runtime_throughput import inbox
from testing.fakes.openai_server import FakeLLM
from testing.scenarios import TIERS, build_index, script_happy_path

Log = Callable[[str], None]
TERMINAL = ("dry_run", "abstained", "skipped", "failed", "needs_llm", "posted")
_DONE = text("SELECT count(*) FROM requests WHERE state IN :done").bindparams(
    bindparam("done", expanding=True)
)
_WINDOW = text(
    "SELECT min(at) FILTER (WHERE reason = 'claimed'), "
    "max(at) FILTER (WHERE to_state IN :done) FROM request_events WHERE request_id > :after"
).bindparams(bindparam("done", expanding=True))


@dataclass(frozen=True)
class Setup:
    processes: int
    concurrency: int  # requests each process runs at once

    @property
    def key(self) -> str:
        return f"{self.processes}w" + (f"_c{self.concurrency}" if self.concurrency > 1 else "")


def _config(tmp: Path, url: str, inbox_path: Path, concurrency: int) -> Path:
    tiers = "\n".join(f'"{domain}" = "{tier}"' for domain, tier in TIERS.items())
    config = tmp / "factnote.toml"
    config.write_text(
        f'''database_url = "{url}"
[local]
inbox = "{inbox_path}"
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


def _count(engine: Engine, query: Any) -> int:
    with engine.connect() as conn:
        try:
            return int(conn.execute(query, {"done": list(TERMINAL)}).scalar_one())
        except Exception:  # the queue's tables are not installed yet
            return 0


def _wait(engine: Engine, query: Any, target: int, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while _count(engine, query) < target:
        if time.monotonic() > deadline:
            raise RuntimeError(f"queue bench: {what} not reached in {timeout_s:.0f}s")
        time.sleep(0.25)


def drain_with(url: str, setup: Setup, fake: FakeLLM, count: int) -> float:
    """Requests/s of `count` requests on `setup`'s worker processes, warmed up first."""
    build_index(url)  # migrates the database too, before any worker opens it
    warm = setup.processes * setup.concurrency
    with tempfile.TemporaryDirectory() as raw:
        tmp = Path(raw)
        config = _config(tmp, url, inbox(tmp / "in", warm), setup.concurrency)
        env = {
            **os.environ,
            "FACTNOTE_LLM_BASE_URL": fake.base_url,
            "FACTNOTE_LLM_MODEL": "fake-model",
            "HF_HUB_OFFLINE": "1",
        }
        factnote = [sys.executable, "-m", "bot.cli", "--config", str(config)]

        def enqueue() -> None:
            subprocess.run([*factnote, "run", "--once"], env=env, check=True, capture_output=True)

        workers = [
            subprocess.Popen([*factnote, "worker"], env=env, stderr=subprocess.DEVNULL)
            for _ in range(setup.processes)
        ]
        engine = create_engine(url)
        try:
            registered = text("SELECT count(*) FROM procrastinate_workers")
            _wait(engine, registered, setup.processes, 600, "workers registered")
            enqueue()  # one warm-up request per slot: models loaded, caches filled
            _wait(engine, _DONE, warm, 600, "warm-up")
            with engine.connect() as conn:
                after = conn.execute(text("SELECT max(id) FROM requests")).scalar_one()
            inbox(tmp / "in", warm + count)
            enqueue()
            _wait(engine, _DONE, warm + count, 1800, "measured batch")
            with engine.connect() as conn:
                first, last = conn.execute(_WINDOW, {"done": list(TERMINAL), "after": after}).one()
        finally:
            for proc in workers:
                proc.send_signal(signal.SIGTERM)
            for proc in workers:
                proc.wait(timeout=120)
            engine.dispose()
    return float(count / (last - first).total_seconds())


def drain_processes(
    count: int = 12,
    processes: tuple[int, ...] = (1, 2, 4),
    delays: tuple[float, ...] = (0.0, 1.5),
    overlapped: int = 4,
    log: Log = print,
) -> dict[str, Any]:
    """For each LLM delay: requests/s with each number of single-request worker processes
    and the ratio to one, then one process running `overlapped` requests at once (0: not)."""
    if not pg_cluster.available():
        log(f"queue_throughput: no PostgreSQL binaries in {pg_cluster.PG_BIN}; not run")
        return {}
    setups = [Setup(n, 1) for n in processes]
    if overlapped > 1:
        setups.append(Setup(1, overlapped))
    numbers: dict[str, Any] = {
        "requests": count,
        "cpu_count": os.cpu_count() or 0,
        "load_avg_1m_before": round(os.getloadavg()[0], 2),
    }
    with pg_cluster.cluster() as server:
        for delay in delays:
            with FakeLLM(delay_s=delay) as fake:
                script_happy_path(fake)
                base = 0.0
                for setup in setups:
                    before = len(fake.requests)
                    name = f"bench_{int(delay * 1000)}ms_{setup.key}"
                    url = pg_cluster.fresh_database(server, name)
                    rate = drain_with(url, setup, fake, count)
                    base = base or rate
                    key = f"llm{delay:g}s_{setup.key}"
                    numbers[f"{key}_per_s"] = round(rate, 3)
                    numbers[f"{key}_ratio"] = round(rate / base, 2)
                    calls = (len(fake.requests) - before) / (
                        count + setup.processes * setup.concurrency
                    )
                    numbers[f"llm{delay:g}s_calls_per_request"] = round(calls, 1)
                    log(
                        f"LLM {delay:g} s, {setup.processes} process(es) x concurrency "
                        f"{setup.concurrency}: {rate:.3f} requests/s ({rate / base:.2f}x one "
                        f"process at concurrency 1); load {os.getloadavg()[0]:.1f}"
                    )
    numbers["load_avg_1m_after"] = round(os.getloadavg()[0], 2)
    return numbers


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    chosen = (
        drain_processes(count=2, processes=(1,), delays=(0.0,), overlapped=0)
        if quick
        else drain_processes()
    )
    for found, value in chosen.items():
        print(f"{found}: {value}")
