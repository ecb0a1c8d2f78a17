"""`factnote review list`: one page at a time, the true total stated, never silently cut."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from storage.db import Database
from storage.models import RequestState
from tests.bot.web.seed import Spec, seed

runner = CliRunner()


@pytest.fixture
def queue_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Database:
    monkeypatch.delenv("FACTNOTE_CONFIG", raising=False)
    url = f"sqlite:///{tmp_path / 'factnote.db'}"
    monkeypatch.setenv("FACTNOTE_DATABASE_URL", url)
    db = Database(url)
    seed(db, [Spec(f"q{i}", RequestState.AWAITING_REVIEW, age_h=1 + i) for i in range(7)])
    yield db
    db.dispose()


def test_review_list_states_the_total_and_how_to_see_the_next_page(queue_db: Database) -> None:
    first = runner.invoke(app, ["review", "list", "--per-page", "3"])
    assert first.exit_code == 0, first.output
    assert "Items 1-3 of 7 awaiting review (page 1 of 3); next: --page 2." in first.output
    last = runner.invoke(app, ["review", "list", "--per-page", "3", "--page", "3"])
    assert "Items 7-7 of 7 awaiting review (page 3 of 3)." in last.output


def test_review_list_json_pages_through_every_item_once(queue_db: Database) -> None:
    seen: list[int] = []
    for page in (1, 2, 3):
        out = runner.invoke(
            app, ["review", "list", "--json", "--per-page", "3", "--page", str(page)]
        )
        data = json.loads(out.output)
        assert (data["total"], data["pages"], data["page"]) == (7, 3, page)
        seen += [item["id"] for item in data["items"]]
    assert len(seen) == len(set(seen)) == 7
