"""The runtime's test harness: a local adapter's inbox and outbox, a built index and settings
pointing at them and at the fake LLM. `summons` and `CLAIM` come from testing.builders and are
named here for the runtime tests that import them from the harness."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import select

from adapters.base import FetchResult, ReplyReceipt, Summons
from adapters.local import LocalAdapter
from bot.config import Settings
from bot.ops.runtime import open_runtime
from bot.ops.service import Bot, build_adapters
from pipeline.records import utcnow
from storage.db import Database
from storage.models import Request
from testing.builders import CLAIM as CLAIM  # re-exported for the runtime tests
from testing.builders import inbox_summons as summons
from testing.builders import write_inbox
from testing.databases import migrated_sqlite
from testing.fakes.openai_server import FakeLLM
from testing.scenarios import TIERS, build_index
from testing.settings import local_settings
from tests.bot.quiet_platform import QuietPlatform


def dated(item: dict[str, Any], age: timedelta) -> dict[str, Any]:
    return {**item, "created_at": (utcnow() - age).isoformat()}


def hold_write_lock(path: Path) -> sqlite3.Connection:
    """Another process's writer: a real SQLite write lock on the database."""
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    return other


class FailingAdapter(QuietPlatform):
    """A platform whose poll fails: with a PlatformError, or with a bug (any exception)."""

    name = "flaky"

    def __init__(self, error: Exception) -> None:
        self.error = error

    def fetch_summons(self, cursor: str | None) -> FetchResult:
        raise self.error

    def post_reply(self, summons: Summons, text: str, links: Sequence[str] = ()) -> ReplyReceipt:
        raise AssertionError("nothing to post")


class Env:
    def __init__(self, tmp: Path, fake: FakeLLM) -> None:
        self.tmp = tmp
        self.fake = fake
        self.inbox = tmp / "inbox"
        self.inbox.mkdir()
        self.outbox = tmp / "outbox.jsonl"
        self.index = tmp / "index.sqlite"  # a side-file path only; the index is in the db
        build_index(migrated_sqlite(tmp / "factnote.db"))

    def add(self, *items: dict[str, Any]) -> None:
        write_inbox(self.inbox, items)

    def settings(self, mode: str = "dry-run", **runtime: Any) -> Settings:
        settings = local_settings(self.tmp, mode=mode)
        settings.credibility.overrides = dict(TIERS)
        settings.llm = self.fake.config()
        settings.runtime.retry_backoff_s = 0
        # The summonses here are dated 2026-11-29, days before the tests run: lift the age
        # limit (tests of the limit pass max_summons_age_s themselves).
        settings.runtime.max_summons_age_s = 0
        for key, value in runtime.items():
            setattr(settings.runtime, key, value)
        return settings

    def run_once(self, settings: Settings) -> None:
        with open_runtime(settings) as runtime:
            Bot(runtime, build_adapters(settings)).run_once()

    def run_one_summons(self, mode: str = "dry-run", **runtime: Any) -> Settings:
        """Summons "1" (about `CLAIM`) through one run in `mode`; returns the settings used."""
        self.add(summons("1"))
        settings = self.settings(mode, **runtime)
        self.run_once(settings)
        return settings

    def requests(self, settings: Settings) -> list[Request]:
        db = Database(settings.database_url)
        with db.session() as session:
            rows = list(session.scalars(select(Request).order_by(Request.id)))
        db.dispose()
        return rows

    def outbox_lines(self) -> list[dict[str, Any]]:
        return LocalAdapter(self.inbox, self.outbox).replies()
