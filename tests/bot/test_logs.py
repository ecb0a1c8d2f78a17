"""What the running bot logs: one line per request transition, JSON for aggregators, no
secrets, and APScheduler's routine chatter kept out of the way."""

from __future__ import annotations

import io
import json
import logging
from types import SimpleNamespace

import pytest

from bot import logs


def capture(formatter: logging.Formatter) -> io.StringIO:
    """The transition logger's lines in `formatter`; tests/conftest.py takes the handler off."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    logs.log.addHandler(handler)
    logs.log.setLevel(logging.INFO)
    return stream


def test_a_transition_is_one_text_line_with_id_platform_states_verdict_reason_and_time() -> None:
    stream = capture(logs.TextFormatter())
    logs.log_transition(
        42,
        "x",
        "dry_run",
        previous="processing",
        verdict="false",
        reason="cites two sources",
        timings={"search": 1.2, "total": 3.456},
    )
    [line] = stream.getvalue().splitlines()
    assert "INFO factnote.requests:" in line
    assert line.endswith(
        'request=42 platform=x processing -> dry_run verdict=false reason="cites two sources" '
        "total=3.46s"
    )


def test_a_transition_in_json_has_stable_keys() -> None:
    stream = capture(logs.JsonFormatter())
    logs.log_transition(7, "bluesky", "retry", previous="processing", error="HTTP 503")
    record = json.loads(stream.getvalue())
    assert list(record)[:4] == ["ts", "level", "logger", "message"]
    assert record["ts"].endswith("+00:00")
    assert {k: record[k] for k in ("level", "logger", "event", "request_id")} == {
        "level": "info",
        "logger": "factnote.requests",
        "event": "transition",
        "request_id": 7,
    }
    assert (record["platform"], record["previous"], record["state"]) == (
        "bluesky",
        "processing",
        "retry",
    )
    assert record["error"] == "HTTP 503"
    assert record["verdict"] is None and record["timings"] is None


def test_secret_values_from_the_environment_never_reach_a_line() -> None:
    env = {
        "FACTNOTE_SEARCH__SERPER_API_KEY": "serper-key-123456",
        "OPENAI_API_KEY": "sk-live-abcdef",
        "FACTNOTE_DATABASE_URL": "postgresql://bot:db-pass-999@db.example/factnote",
        "FACTNOTE_MODE": "live",  # not a secret: kept
        "HOME": "/root",
    }
    secrets = logs.secret_values(env)
    assert set(secrets) == {"serper-key-123456", "sk-live-abcdef", "db-pass-999"}
    record = logging.LogRecord(
        "httpx", logging.WARNING, __file__, 1, "GET %s failed (key %s)", None, None
    )
    record.args = ("https://api.example/?key=serper-key-123456", "sk-live-abcdef")
    for formatter in (logs.TextFormatter(secrets), logs.JsonFormatter(secrets)):
        line = formatter.format(record)
        assert "serper-key" not in line and "sk-live" not in line
        assert "***" in line
    failure = logging.LogRecord("db", logging.ERROR, __file__, 1, "%s", None, None)
    failure.args = ("could not connect to postgresql://bot:db-pass-999@db.example",)
    assert "db-pass-999" not in logs.TextFormatter(secrets).format(failure)


def test_setup_logging_writes_json_lines_to_stderr_at_the_level_asked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    logs.setup_logging("info", "json")
    logs.setup_logging("info", "json")  # a second call replaces, never doubles, the handler
    logging.getLogger("bot.ops.service").info("factnote running")
    logging.getLogger("bot.ops.service").debug("not shown")
    lines = capsys.readouterr().err.splitlines()
    assert [json.loads(line)["message"] for line in lines] == ["factnote running"]
    with pytest.raises(ValueError, match="unknown log level"):
        logs.setup_logging("loud")


def skipped_record(job_id: str) -> logging.LogRecord:
    # The record APScheduler 3.x writes (apscheduler/schedulers/base.py, _process_jobs).
    record = logging.LogRecord(
        "apscheduler.scheduler",
        logging.WARNING,
        __file__,
        1,
        'Execution of job "%s" skipped: maximum number of running instances reached (%d)',
        None,
        None,
    )
    record.args = (SimpleNamespace(id=job_id, name="run"), 1)
    return record


def test_skipped_scheduler_starts_become_one_summary_line_per_window(
    caplog: pytest.LogCaptureFixture,
) -> None:
    skipped = logs.SkippedRuns(window_s=3600)
    with caplog.at_level(logging.INFO, logger="bot.ops.service"):
        assert not any(skipped.filter(skipped_record("drain")) for _ in range(30))
        assert caplog.records == []  # within the window: nothing
        skipped.window_s = 0
        assert not skipped.filter(skipped_record("drain"))
    [summary] = caplog.records
    assert summary.levelno == logging.INFO
    assert summary.getMessage().startswith("job drain was still running at 31 of its")
    assert "not an error" in summary.getMessage()
    other = logging.LogRecord("apscheduler.scheduler", logging.ERROR, "", 1, "boom", None, None)
    assert skipped.filter(other)  # other scheduler records pass untouched


def test_apscheduler_per_run_lines_are_kept_below_info() -> None:
    logs.setup_logging("info")
    executors = logging.getLogger("apscheduler.executors.default")
    assert not executors.isEnabledFor(logging.INFO)
    assert executors.isEnabledFor(logging.WARNING)
    logs.setup_logging("debug")
    assert executors.isEnabledFor(logging.DEBUG)
    logs.setup_logging("warning")
