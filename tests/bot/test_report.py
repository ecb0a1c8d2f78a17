"""The HTML audit report: its figures match the rows, and it says when nothing was posted."""

from __future__ import annotations

import html
import re
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from bot.cli import app
from bot.report import abstain_category, agreement_of, collect, render_html
from storage.db import Database
from storage.models import DecisionRow, EvidenceRow, Request, ReviewAction
from tests.bot.web.seed import default_specs, seed

runner = CliRunner()


@pytest.fixture(autouse=True)
def _no_ambient_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FACTNOTE_CONFIG", raising=False)


def figures(page: str) -> dict[str, str]:
    return {
        html.unescape(k): v.strip() for k, v in re.findall(r'data-key="([^"]+)">([^<]*)<', page)
    }


def _latest(db: Database) -> dict[int, DecisionRow]:
    with db.session() as session:
        rows = session.scalars(select(DecisionRow).order_by(DecisionRow.id)).all()
        latest: dict[int, DecisionRow] = {}
        for row in rows:
            latest[row.request_id] = row
        for row in latest.values():
            _ = row.evidence  # loaded while the session is open
        return latest


def _render(db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> str:
    monkeypatch.setenv("FACTNOTE_DATABASE_URL", db.url)
    out = tmp_path / "report"
    result = runner.invoke(app, ["report", "--out", str(out), *args])
    assert result.exit_code == 0, result.output
    return (out / "index.html").read_text(encoding="utf-8")


def test_report_figures_match_the_rows(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(db)
    page = _render(db, tmp_path, monkeypatch)
    shown = figures(page)
    with db.session() as session:
        requests = session.scalars(select(Request)).all()
        states = Counter(r.state for r in requests)
        actions = session.scalars(select(ReviewAction)).all()
    assert shown["total"] == str(len(requests))
    for state, count in states.items():
        assert shown[f"state:{state}"] == str(count)
    assert shown["outcome:replied"] == str(states["posted"])
    assert shown["outcome:queued for review"] == str(states["awaiting_review"])
    assert shown["outcome:abstained"] == str(states["abstained"])
    assert shown["outcome:failed"] == str(states["failed"])
    assert shown["outcome:needs an LLM"] == str(states["needs_llm"])
    assert shown["skip:user opted out"] == "1"
    assert shown["abstain:not_enough_evidence"] == "1"
    assert shown["abstain:guard: thin_evidence"] == "1"

    latest = _latest(db)
    verdicts = Counter(d.verdict or "none" for d in latest.values())
    for verdict, count in verdicts.items():
        assert shown[f"verdict:{verdict}"] == str(count)
    cited = [e for d in latest.values() if d.status == "reply" for e in d.evidence]
    for tier, count in Counter(e.tier for e in cited).items():
        assert shown[f"tier:{tier}"] == str(count)
    for domain, count in Counter(e.domain for e in cited).items():
        assert shown[f"publisher:{domain}"] == str(count)
    per_reply = Counter(len(d.evidence) for d in latest.values() if d.status == "reply")
    for n, count in per_reply.items():
        assert shown[f"evidence:{n}"] == str(count)
    assert shown["guard:too_long"] == "1" and shown["guard:url_not_evidence"] == "1"
    assert shown["agreement:approved as-is"] == "1"
    assert shown["agreement:edited, then approved"] == "1"
    assert shown["agreement:rejected"] == "1"
    assert shown["reject:wrong verdict"] == str(sum(1 for a in actions if a.action == "reject"))
    with db.session() as session:
        total_cost = sum(session.scalars(select(DecisionRow.cost_usd)))
    assert shown["cost"] == f"{total_cost:.4f}"


def test_report_is_self_contained_with_inline_svg_charts(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(db)
    page = _render(db, tmp_path, monkeypatch)
    assert page.count("<svg") >= 8
    assert "<script" not in page and "<link" not in page
    assert not re.search(r'(src|href)="https?://', page)


def test_dry_run_banner_when_nothing_was_posted(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(db, default_specs(posted=False))
    page = _render(db, tmp_path, monkeypatch)
    assert 'id="dry-run-banner"' in page
    assert "Nothing was posted in this period." in page
    assert 'id="posted-banner"' not in page


def test_no_dry_run_banner_when_replies_were_posted(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(db)
    page = _render(db, tmp_path, monkeypatch)
    assert 'id="dry-run-banner"' not in page
    assert figures(page)["posted"] == "2"


def test_since_limits_the_period(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = seed(db)
    since = world.now.date().isoformat()
    page = _render(db, tmp_path, monkeypatch, "--since", since)
    with db.session() as session:
        kept = [
            r for r in session.scalars(select(Request)) if r.created_at.date().isoformat() >= since
        ]
    assert figures(page)["total"] == str(len(kept))
    assert len(kept) < len(world.ids)


def test_data_in_labels_cannot_inject_markup(db: Database) -> None:
    world = seed(db)
    with db.transaction() as session:
        evidence = session.scalars(select(EvidenceRow)).first()
        assert evidence is not None
        evidence.domain = "<script>alert(1)</script>.example"
        session.get(Request, world.ids["skipped"]).reason = "<img src=x onerror=alert(1)>"  # type: ignore[union-attr]
    page = render_html(collect(db))
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;.example" in page


def test_an_empty_database_still_gives_a_report(db: Database) -> None:
    page = render_html(collect(db))
    assert 'id="dry-run-banner"' in page and figures(page)["total"] == "0"


@pytest.mark.parametrize(
    ("reasons", "category"),
    [
        (["guard: thin_evidence: 1 source"], "guard: thin_evidence"),
        (["not checkable: an opinion"], "not checkable"),
        (["reused the answer of request #3", "refuted: x"], "refuted"),
        ([], "unspecified"),
    ],
)
def test_abstentions_are_counted_by_rule_or_reason(reasons: list[str], category: str) -> None:
    assert abstain_category(reasons) == category


def test_agreement_is_judged_from_the_actions_taken() -> None:
    def acts(*kinds: str) -> list[ReviewAction]:
        return [ReviewAction(request_id=1, actor="m", action=k, detail={}) for k in kinds]

    assert agreement_of(acts("approve")) == "approved as-is"
    assert agreement_of(acts("edit", "approve")) == "edited, then approved"
    assert agreement_of(acts("edit", "reject")) == "rejected"
    assert agreement_of(acts("escalate")) == "escalated, open"
    assert agreement_of(acts("expire")) == "expired without a decision"
    assert agreement_of([]) is None
