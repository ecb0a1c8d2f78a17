"""`factnote export`: one record per decision, with the trace and the snapshot hashes."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from bot.cli import app
from bot.reports import export
from bot.reports.export import export_records, write_csv
from pipeline.records import Evidence
from storage.db import Database
from storage.models import DecisionRow, DocumentRow, Request, ReviewAction
from tests.bot.web.seed import seed, seed_bot_request_and_check_run

runner = CliRunner()


@pytest.fixture(autouse=True)
def _env(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FACTNOTE_CONFIG", raising=False)
    monkeypatch.setenv("FACTNOTE_DATABASE_URL", db.url)


def _decisions(db: Database) -> list[DecisionRow]:
    with db.session() as session:
        rows = list(session.scalars(select(DecisionRow).order_by(DecisionRow.id)))
        for row in rows:
            _ = (row.evidence, row.llm_calls, row.request)
        return rows


def test_jsonl_has_one_record_per_decision_with_trace_and_hashes(
    db: Database, tmp_path: Path
) -> None:
    seed(db)
    out = tmp_path / "decisions.jsonl"
    result = runner.invoke(app, ["export", "--format", "jsonl", "--out", str(out)])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    rows = _decisions(db)
    assert [r["decision_id"] for r in records] == [row.id for row in rows]
    with db.session() as session:
        snapshots = {d.content_hash: d.text for d in session.scalars(select(DocumentRow))}
    for record, row in zip(records, rows, strict=True):
        assert record["request_id"] == row.request_id
        assert record["status"] == row.status and record["verdict"] == row.verdict
        assert record["trace"] == row.trace
        assert record["final_text"] == row.request.reply_text
        assert record["content_hashes"] == [e.content_hash for e in row.evidence]
        assert [e["url"] for e in record["evidence"]] == [e.url for e in row.evidence]
        assert len(record["llm_calls"]) == len(row.llm_calls)
        for evidence in record["evidence"]:
            # The hash identifies the stored snapshot the quote came from.
            text = snapshots[evidence["content_hash"]]
            assert hashlib.sha256(text.encode()).hexdigest() == evidence["content_hash"]
            assert evidence["quote"] in text
    assert any(r["evidence"] for r in records)


def test_csv_has_the_same_records_flattened(db: Database, tmp_path: Path) -> None:
    seed(db)
    out = tmp_path / "decisions.csv"
    assert runner.invoke(app, ["export", "--format", "csv", "--out", str(out)]).exit_code == 0
    with out.open(encoding="utf-8", newline="") as handle:
        records = list(csv.DictReader(handle))
    rows = _decisions(db)
    assert [int(r["decision_id"]) for r in records] == [row.id for row in rows]
    for record, row in zip(records, rows, strict=True):
        assert record["content_hashes"].split() == [e.content_hash for e in row.evidence]
        assert json.loads(record["trace"]) == row.trace
        assert [e["content_hash"] for e in json.loads(record["evidence"])] == [
            e.content_hash for e in row.evidence
        ]


def test_csv_cells_that_would_run_as_formulas_are_defused(db: Database) -> None:
    world = seed(db)
    with db.transaction() as session:
        request = session.get(Request, world.ids["review_local"])
        assert request is not None
        request.reply_text = '=HYPERLINK("https://evil.example")'
    out = io.StringIO()
    write_csv(export_records(db), out)
    records = list(csv.DictReader(io.StringIO(out.getvalue())))
    cell = next(
        r["final_text"] for r in records if r["request_id"] == str(world.ids["review_local"])
    )
    assert cell == "'" + '=HYPERLINK("https://evil.example")'


def test_since_keeps_later_decisions_and_stdout_is_the_default(db: Database) -> None:
    seed(db)
    rows = _decisions(db)
    cutoff = rows[0].created_at + timedelta(seconds=1)
    with db.transaction() as session:
        old = session.get(DecisionRow, rows[0].id)
        assert old is not None
        old.created_at = cutoff - timedelta(days=3)
    day = (cutoff - timedelta(days=1)).date().isoformat()
    result = runner.invoke(app, ["export", "--since", day])
    assert result.exit_code == 0, result.output
    ids = [json.loads(line)["decision_id"] for line in result.stdout.splitlines()]
    assert ids == [row.id for row in rows[1:]]


def test_an_unknown_format_is_refused() -> None:
    result = runner.invoke(app, ["export", "--format", "xml"])
    assert result.exit_code != 0


def test_every_decision_column_and_evidence_field_is_exported() -> None:
    # Records are filled by column name (`_record`), so a new column or evidence field is
    # exported without a change there: this fails only if one has no field of its name.
    names = {export._DECISION_NAMES.get(c.key, c.key) for c in DecisionRow.__table__.columns}
    assert names <= set(export.ExportRecord.model_fields)
    assert list(export.ExportEvidence.model_fields) == ["position", *Evidence.model_fields]


def test_moderator_actions_are_exported_with_the_decision_they_acted_on(db: Database) -> None:
    world = seed(db)
    records = {r.request_id: r for r in export_records(db)}
    edited = records[world.ids["posted_edited"]]
    assert [(a.actor, a.action) for a in edited.review_actions] == [
        ("mod_demo", "edit"),
        ("mod_demo", "approve"),
    ]
    assert edited.review_actions[0].detail["after"].endswith("Stay well.")
    assert [a.action for a in records[world.ids["rejected"]].review_actions] == ["reject"]
    assert records[world.ids["dry_run"]].review_actions == []
    out = io.StringIO()
    write_csv(export_records(db), out)
    rows = {int(r["request_id"]): r for r in csv.DictReader(io.StringIO(out.getvalue()))}
    actions = json.loads(rows[world.ids["rejected"]]["review_actions"])
    assert actions[0]["actor"] == "mod_demo" and actions[0]["detail"]["reason"] == "wrong verdict"


def test_a_retried_request_has_its_actions_on_the_draft_they_judged(db: Database) -> None:
    world = seed(db)
    request_id = world.ids["rejected"]
    with db.transaction() as session:
        first = session.scalars(
            select(DecisionRow).where(DecisionRow.request_id == request_id)
        ).one()
        action_at = session.scalars(
            select(ReviewAction.created_at).where(ReviewAction.request_id == request_id)
        ).one()
        first.created_at = action_at - timedelta(minutes=5)
        retry = DecisionRow(
            request_id=request_id,
            status="reply",
            platform="x",
            as_of=action_at,
            created_at=action_at + timedelta(minutes=5),
        )
        session.add(retry)
    records = [r for r in export_records(db) if r.request_id == request_id]
    assert [[a.action for a in r.review_actions] for r in records] == [["reject"], []]


def test_check_runs_are_exported_with_their_origin(db: Database) -> None:
    seed_bot_request_and_check_run(db)
    assert [(r.platform, r.origin) for r in export_records(db)] == [
        ("local", "bot"),
        ("cli", "check"),
    ]
