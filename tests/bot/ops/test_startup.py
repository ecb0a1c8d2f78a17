"""`factnote run` says what it will do when it starts, and warns when it can do nothing useful:
an empty local inbox with no platform enabled, and a search limited to the local index."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.config import Settings
from bot.ops.startup import startup_report
from pipeline.shared_parts import SharedParts
from testing import indexes
from testing.settings import local_settings

runner = CliRunner()


@pytest.fixture(autouse=True)
def no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("FACTNOTE_", "OPENAI_")):
            monkeypatch.delenv(name)


@pytest.fixture
def shared_parts_for(tmp_path: Path) -> Iterator[list[SharedParts]]:
    built: list[SharedParts] = []
    yield built
    for shared in built:
        shared.close()


def report_for(settings: Settings, built: list[SharedParts]) -> tuple[list[str], list[str]]:
    shared = indexes.build_parts(settings.pipeline(), index_path=settings.index_path)
    built.append(shared)
    report = startup_report(settings, shared)
    return report.lines, report.warnings


def test_an_empty_inbox_and_only_the_local_index_are_both_warned_about(
    tmp_path: Path, shared_parts_for: list[SharedParts]
) -> None:
    (tmp_path / "inbox").mkdir()
    lines, warnings = report_for(local_settings(tmp_path), shared_parts_for)
    assert len(warnings) == 2
    assert f"the local inbox ({tmp_path / 'inbox'}) is empty" in warnings[0]
    assert "[x] enabled = true" in warnings[0]
    assert "only the local index (0 documents)" in warnings[1]
    assert "[search] providers" in warnings[1]
    assert "mode: local dry-run" in lines and "adapters: local" in lines
    assert any(line.startswith("LLM: none configured") for line in lines)


def test_a_waiting_summons_and_a_web_provider_leave_nothing_to_warn_about(
    tmp_path: Path, shared_parts_for: list[SharedParts]
) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "1.json").write_text("{}", encoding="utf-8")
    settings = local_settings(
        tmp_path, search={"providers": ["searxng", "local"], "searxng_url": "http://127.0.0.1:9"}
    )
    lines, warnings = report_for(settings, shared_parts_for)
    assert warnings == []
    assert f"local inbox: {inbox} (1 summons waiting)" in lines


def test_using_unreviewed_memory_is_warned_about(
    tmp_path: Path, shared_parts_for: list[SharedParts]
) -> None:
    (tmp_path / "inbox").mkdir()
    (tmp_path / "inbox" / "1.json").write_text("{}", encoding="utf-8")
    search = {"providers": ["searxng"], "searxng_url": "http://127.0.0.1:9"}
    _, quiet = report_for(local_settings(tmp_path, search=search), shared_parts_for)
    assert quiet == []
    settings = local_settings(tmp_path, search=search, memory={"use_proposed": True})
    _, warnings = report_for(settings, shared_parts_for)
    assert warnings == [
        "memory.use_proposed is on: what the bot learned from its own episodes reaches later "
        "prompts without a moderator's approval, so a stranger's post can steer them"
    ]


def test_the_database_password_is_never_shown(
    tmp_path: Path, shared_parts_for: list[SharedParts]
) -> None:
    settings = local_settings(tmp_path)
    settings.database_url = "postgresql+psycopg://factnote:s3cret-pw@db.example:5432/factnote"
    lines, _ = report_for(settings, shared_parts_for)
    assert "s3cret-pw" not in " ".join(lines)
    assert "database: postgresql+psycopg://factnote:***@db.example:5432/factnote" in lines


def test_run_once_logs_the_warning_for_an_idle_bot(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "inbox").mkdir()
    config = tmp_path / "factnote.toml"
    database = f"sqlite:///{tmp_path / 'factnote.db'}"
    config.write_text(
        f"database_url = {json.dumps(database)}\n"
        f"index_path = {json.dumps(str(tmp_path / 'index.sqlite'))}\n"
        f"[local]\ninbox = {json.dumps(str(tmp_path / 'inbox'))}\n"
        f"outbox = {json.dumps(str(tmp_path / 'outbox.jsonl'))}\n",
        encoding="utf-8",
    )
    with caplog.at_level(logging.INFO, logger="factnote.run"):
        result = runner.invoke(app, ["--config", str(config), "run", "--once"])
    assert result.exit_code == 0, result.output
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("local inbox" in m and "is empty" in m for m in warned), warned
    assert any("only the local index" in m for m in warned), warned
