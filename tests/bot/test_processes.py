"""`factnote` as a real process: the demo, a clean shutdown on SIGTERM, and a crash test that
SIGKILLs the bot at random moments while it works through a 200-post inbox."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from subprocess import Popen
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from adapters.local import LocalAdapter
from testing.fakes.openai_server import FakeLLM
from testing.scenarios import TIERS, build_index
from tests.bot.child_processes import FACTNOTE, REPO, TERMINAL, env_for, make_inbox, script

# Runs Python or the bot as child processes: left out of `make test-fast`.
pytestmark = pytest.mark.process


def write_config(tmp: Path, **extra: Any) -> Path:
    overrides = "\n".join(f'"{domain}" = "{tier}"' for domain, tier in TIERS.items())
    runtime = "\n".join(f"{k} = {json.dumps(v)}" for k, v in extra.items())
    config = tmp / "factnote.toml"
    config.write_text(
        f"""
database_url = "sqlite:///{tmp / "factnote.db"}"
index_path = "{tmp / "index.sqlite"}"

[local]
inbox = "{tmp / "inbox"}"
outbox = "{tmp / "outbox.jsonl"}"

[runtime]
per_user_hourly = 1000
global_hourly = 10000
retry_backoff_s = 0
# The inbox is dated 2026-11-29, days before the tests run: lift the summons age limit.
max_summons_age_s = 0
{runtime}

[credibility.overrides]
{overrides}
""",
        encoding="utf-8",
    )
    return config


def states(tmp: Path) -> dict[str, str]:
    engine = create_engine(f"sqlite:///{tmp / 'factnote.db'}")
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT summons_id, state FROM requests")).all()
    except OperationalError:  # the bot has created the file but not yet migrated it
        rows = []
    finally:
        engine.dispose()
    return {sid: state for sid, state in rows}


def start(args: list[str], fake: FakeLLM, *, stdout: int = subprocess.DEVNULL) -> Popen[str]:
    """`factnote` with `args` as a process of its own, its LLM the fake; stderr kept to read."""
    return subprocess.Popen(
        [*FACTNOTE, *args], env=env_for(fake), stdout=stdout, stderr=subprocess.PIPE, text=True
    )


def wait_for(done: Callable[[], bool], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not done():
        time.sleep(0.5)


def terminate(proc: Popen[str]) -> str:
    """SIGTERM, then what the process wrote to stderr. One that has not ended in 90 s fails
    the test with every thread's stack (the CLI dumps them on SIGUSR1) and is killed."""
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.communicate(timeout=90)[1]
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)
        time.sleep(3)
        proc.kill()
        stderr = proc.communicate()[1]
        pytest.fail(f"not stopped 90 s after SIGTERM; its stderr and threads:\n{stderr[-12000:]}")
    finally:
        if proc.poll() is None:
            proc.kill()


def test_demo_runs_end_to_end_and_reports_what_needs_an_llm(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            *FACTNOTE,
            "--config",
            str(REPO / "examples/demo.toml"),
            "demo",
            "--examples",
            str(REPO / "examples"),
        ],
        cwd=tmp_path,
        env=env_for(None),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "Requests by outcome" in out
    assert "needed an LLM" in out
    assert "nothing was posted" in out
    engine = create_engine(f"sqlite:///{tmp_path / 'data/demo/factnote.db'}")
    with engine.connect() as conn:
        count = conn.execute(text("SELECT count(*) FROM requests")).scalar()
        replies = conn.execute(text("SELECT count(*) FROM requests WHERE state='dry_run'")).scalar()
        llm = conn.execute(text("SELECT count(*) FROM requests WHERE state='needs_llm'")).scalar()
        indexed = [
            conn.execute(text(f"SELECT count(*) FROM {table}")).scalar()
            for table in ("claims", "local_documents")
        ]
    engine.dispose()
    assert count == len(list((REPO / "examples/inbox").glob("*.json")))
    # Without an LLM, the posts matching a fictional fact-check get a templated reply.
    assert (replies, llm) == (2, 4)
    # The indexes are tables of the one database: no side files beside it.
    assert indexed == [3, 6]
    assert not list((tmp_path / "data/demo").glob("*.sqlite"))
    assert "factcheck-desk.example/checks/northvale-5g-birds" in out


def test_sigterm_stops_cleanly_without_half_done_requests(tmp_path: Path) -> None:
    make_inbox(tmp_path, 30)
    build_index(f"sqlite:///{tmp_path / 'factnote.db'}")
    config = write_config(tmp_path, workers=2)
    with FakeLLM(delay_s=0.3) as fake:
        script(fake)
        proc = start(["--config", str(config), "run", "--mode", "live"], fake)
        wait_for(lambda: "posted" in states(tmp_path).values(), 120)
        err = terminate(proc)
    assert proc.returncode == 0, err[-3000:]
    final = states(tmp_path)
    assert "processing" not in final.values() and "posting" not in final.values()
    assert len(final) == 30  # every summons was taken in; unfinished ones wait in the queue
    posted = {sid for sid, state in final.items() if state == "posted"}
    replies = [
        r["in_reply_to"]
        for r in LocalAdapter(tmp_path / "inbox", tmp_path / "outbox.jsonl").replies()
    ]
    assert sorted(replies) == sorted(posted)


@pytest.mark.slow
def test_sigkill_at_random_moments_never_loses_or_doubles_a_reply(tmp_path: Path) -> None:
    ids = make_inbox(tmp_path, 200)
    build_index(f"sqlite:///{tmp_path / 'factnote.db'}")
    config = write_config(tmp_path, workers=2)
    rng = random.Random(20261130)
    kills = 0
    with FakeLLM(delay_s=0.03) as fake:
        script(fake)
        for _attempt in range(40):
            proc = start(["--config", str(config), "run", "--once", "--mode", "live"], fake)
            # Kill at a random moment for the first runs, then let one finish.
            budget = rng.uniform(4.0, 14.0) if kills < 8 else 600
            try:
                proc.wait(timeout=budget)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                kills += 1
                continue
            assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
            break
        else:
            pytest.fail("the bot never finished the inbox")
    assert kills >= 3, "the test must really interrupt the bot"
    final = states(tmp_path)
    assert set(final) == set(ids), "no summons may be lost"
    assert set(final.values()) <= TERMINAL, {s for s in final.values() if s not in TERMINAL}
    posted = sorted(sid for sid, state in final.items() if state == "posted")
    replies = sorted(
        r["in_reply_to"]
        for r in LocalAdapter(tmp_path / "inbox", tmp_path / "outbox.jsonl").replies()
    )
    assert replies == posted, "exactly one outbox reply per summons decided as a reply"
    assert len(posted) >= 150
    assert {final[s] for s in ids if int(s) % 10 == 0} == {"abstained"}


def test_the_running_bot_logs_json_transitions_without_scheduler_chatter(tmp_path: Path) -> None:
    # Issue 18.6: `run` logged nothing of its work, but a scheduler line every second and a
    # "maximum number of running instances reached" warning whenever a drain ran long.
    ids = make_inbox(tmp_path, 12)
    build_index(f"sqlite:///{tmp_path / 'factnote.db'}")
    config = write_config(tmp_path, workers=1)
    with FakeLLM(delay_s=0.3) as fake:  # drains last seconds: starts come while one runs
        script(fake)
        # --config after the sub-command, as people type it (issue 18.11).
        args = ["--log-level", "info", "--log-format", "json", "run", "--config", str(config)]
        proc = start(args, fake)

        def all_decided() -> bool:
            final = states(tmp_path)
            return len(final) == len(ids) and set(final.values()) <= TERMINAL

        wait_for(all_decided, 180)
        err = terminate(proc)
    assert proc.returncode == 0, err[-3000:]
    records = [json.loads(line) for line in err.splitlines() if line.strip()]  # all JSON
    assert not [r for r in records if r["logger"].startswith("apscheduler")]
    assert any(r["message"].startswith("factnote running in dry-run mode") for r in records)
    moves = [r for r in records if r.get("event") == "transition"]
    assert {r["request_id"] for r in moves} == set(range(1, len(ids) + 1))
    done = [r for r in moves if r["previous"] == "processing"]
    assert {r["state"] for r in done} <= {"dry_run", "abstained"}
    assert all(r["timings"]["total"] > 0 for r in done)
