"""The runtime's recovery on the local adapter: LLM failures retried then failed, leases of dead
workers taken over (and of live ones left alone), unreadable rows failing alone, and a locked
database waited out or reported in one line."""

from __future__ import annotations

import logging
import socket
import subprocess
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot import cli
from bot.config import Settings
from bot.ops.runtime import Runtime, open_runtime
from bot.ops.service import Bot, build_adapters
from bot.ops.summary import overview
from pipeline.records import utcnow
from storage.db import Database, DatabaseBusy
from storage.models import Cursor, Request, RequestState
from testing.fakes.openai_server import Reply
from tests.bot.runtime.harness import Env, hold_write_lock, summons


def test_llm_failure_is_retried_then_failed_and_others_still_served(env: Env) -> None:
    env.fake.script(
        "analyze",
        lambda body: (
            Reply.text("not json")
            if any("broken" in str(m["content"]) for m in body["messages"])
            else Reply.json(
                {
                    "checkable": True,
                    "reason": "",
                    "claims": ["lemon water kills flu"],
                    "questions": [],
                    "queries": ["lemon water kills flu virus"],
                }
            )
        ),
    )
    env.add(summons("1", parent_text="A broken claim about lemon water."), summons("2"))
    settings = env.settings(max_attempts=2, retry_backoff_s=3600)
    env.run_once(settings)
    broken, fine = env.requests(settings)
    assert broken.state == RequestState.RETRY.value
    assert broken.next_attempt_at is not None and broken.next_attempt_at > utcnow()
    assert broken.last_error and "LLMInvalidOutput" in broken.last_error
    assert fine.state == RequestState.DRY_RUN.value
    env.run_once(settings)  # not due yet: untouched
    assert env.requests(settings)[0].attempts == 1
    with open_runtime(settings) as runtime, runtime.db.transaction() as session:
        session.get(Request, broken.id).next_attempt_at = utcnow()  # type: ignore[union-attr]
    env.run_once(settings)
    broken = env.requests(settings)[0]
    assert broken.state == RequestState.FAILED.value
    assert broken.attempts == 2
    assert "failed after 2 attempt(s)" in broken.reason


def claim_one_and_stop(env: Env, settings: Settings) -> tuple[int, str]:
    """Poll one summons and claim it as a worker that then stops without finishing: the
    request stays `processing` under that worker's lease. Returns (request id, worker)."""
    env.add(summons("1"))
    with open_runtime(settings) as runtime:
        bot = Bot(runtime, build_adapters(settings))
        bot.poll_adapter("local")
        request_id = bot.worker.claim_next()
        assert request_id is not None
        bot.worker.stop()
    return request_id, bot.worker.name


@pytest.mark.parametrize(
    ("worker_died", "state", "attempts"),
    [
        pytest.param(True, RequestState.DRY_RUN, 2, id="dead-process-requeued"),
        pytest.param(False, RequestState.PROCESSING, 1, id="live-worker-not-taken-over"),
    ],
)
def test_a_request_left_processing_is_taken_over_only_from_a_dead_process(
    env: Env, worker_died: bool, state: RequestState, attempts: int
) -> None:
    settings = env.settings()
    request_id, worker = claim_one_and_stop(env, settings)
    if worker_died:
        # "The process dies": the lease names a process of this host that is gone.
        gone = subprocess.Popen(["true"])
        gone.wait()
        with open_runtime(settings) as runtime, runtime.db.transaction() as session:
            row = session.get(Request, request_id)
            assert row is not None and row.lease_owner == worker
            row.lease_owner = f"{socket.gethostname()}:{gone.pid}:1"
    env.run_once(settings)
    [request] = env.requests(settings)
    assert (request.state, request.attempts) == (state.value, attempts)


def test_runtime_object_is_usable_for_status(env: Env) -> None:
    settings = env.run_one_summons()
    with open_runtime(settings) as runtime:
        assert isinstance(runtime, Runtime)
        view = overview(runtime.db)
    assert view.by_state == {"dry_run": 1}
    assert view.polls[0].adapter == "local"


def test_a_request_that_cannot_be_read_fails_alone_in_triage_and_processing(env: Env) -> None:
    # The same fault as issue 16.2 one step later: one unreadable row stopped every request
    # behind it (triage raised; a worker raised and left its request in `processing`).
    settings = env.settings()
    with open_runtime(settings) as runtime, runtime.db.transaction() as session:
        for sid, state in (("old-1", "received"), ("old-2", "queued")):
            session.add(
                Request(platform="local", summons_id=sid, summons={"no": "summons"}, state=state)
            )
    env.add(summons("1"))
    env.run_once(settings)
    rows = {r.summons_id: r for r in env.requests(settings)}
    assert rows["old-1"].state == RequestState.FAILED.value
    assert rows["old-1"].reason.startswith("triage failed: ValidationError")
    assert rows["old-2"].state == RequestState.FAILED.value  # retried, then given up
    assert "internal error" in rows["old-2"].reason
    assert rows["1"].state == RequestState.DRY_RUN.value


def test_a_lock_held_past_the_busy_timeout_is_waited_out(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    # Issue 16.9: a lock held past the busy timeout ended the run with a traceback.
    env.add(summons("1"))
    settings = env.settings(db_lock_attempts=8, db_lock_backoff_s=0.1)
    settings.database_busy_timeout_s = 0.05
    Database(settings.database_url).dispose()  # migrated, as a running bot's would be
    other = hold_write_lock(env.tmp / "factnote.db")
    release = threading.Timer(1.5, other.execute, args=["ROLLBACK"])
    release.start()
    try:
        with caplog.at_level(logging.WARNING, logger="storage.db"):
            env.run_once(settings)
    finally:
        release.cancel()
        other.close()
    assert env.requests(settings)[0].state == RequestState.DRY_RUN.value
    assert "locked by another connection" in caplog.text


def test_a_lock_outlasting_every_retry_ends_the_run_in_one_line(env: Env, tmp_path: Path) -> None:
    env.add(summons("1"))
    settings = env.settings()
    Database(settings.database_url).dispose()
    config = tmp_path / "locked.toml"
    config.write_text(
        f"""database_url = "{settings.database_url}"
database_busy_timeout_s = 0.05
index_path = "{env.index}"

[local]
inbox = "{env.inbox}"
outbox = "{env.outbox}"

[runtime]
db_lock_attempts = 2
db_lock_backoff_s = 0.01
""",
        encoding="utf-8",
    )
    other = hold_write_lock(env.tmp / "factnote.db")
    try:
        result = CliRunner().invoke(cli.app, ["--config", str(config), "run", "--once"])
    finally:
        other.close()
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 75
    assert "stayed locked by another connection through 2 attempt(s)" in result.stderr
    assert "Traceback" not in result.output
    # The same run in code: a typed error to report, not a crash.
    settings.database_busy_timeout_s = 0.05
    settings.runtime.db_lock_attempts = 2
    settings.runtime.db_lock_backoff_s = 0.01
    other = hold_write_lock(env.tmp / "factnote.db")
    try:
        with pytest.raises(DatabaseBusy):
            env.run_once(settings)
    finally:
        other.close()


def test_any_command_meeting_a_lock_ends_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "factnote.db"
    db = Database(f"sqlite:///{path}", busy_timeout_s=0.05)

    def a_command_that_writes() -> None:  # `review approve`, `users add`...
        with db.transaction() as session:
            session.add(Cursor(adapter="local"))

    monkeypatch.setattr(cli, "app", a_command_that_writes)
    other = hold_write_lock(path)
    try:
        with pytest.raises(SystemExit) as exit_:
            cli.main()
    finally:
        other.close()
        db.dispose()
    assert exit_.value.code == 75
    err = capsys.readouterr().err
    assert err == ("factnote: error: the database is locked by another process; try again later\n")
