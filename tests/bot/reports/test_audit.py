"""The HTML audit report: its figures match the rows, and it says when nothing was posted."""

from __future__ import annotations

import html
import re
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from bot.cli import app
from bot.ops.summary import CLI_PLATFORM, overview
from bot.reports import audit as report_module
from bot.reports.audit import abstain_category, agreement_of, collect, render_html
from bot.reports.detail import anchor, post_url, reply_url
from storage.db import Database
from storage.models import (
    DecisionRow,
    EvidenceRow,
    Request,
    RequestEvent,
    RequestState,
    ReviewAction,
)
from storage.repositories import create_cli_request
from testing.scenarios import POST
from tests.bot.web.seed import Spec, default_specs, seed

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
    with db.session() as session:
        posted = set(session.scalars(select(Request.id).where(Request.state == "posted")))
    # Only replies that reached a platform count as replies: drafts are counted apart.
    replies = [d for rid, d in latest.items() if d.status == "reply" and rid in posted]
    drafts = [d for rid, d in latest.items() if d.status == "reply" and rid not in posted]
    assert shown["replies"] == str(len(replies)) and shown["drafted"] == str(len(drafts))
    cited = [e for d in replies for e in d.evidence]
    for tier, count in Counter(e.tier for e in cited).items():
        assert shown[f"tier:{tier}"] == str(count)
    for domain, count in Counter(e.domain for e in cited).items():
        assert shown[f"publisher:{domain}"] == str(count)
    per_reply = Counter(len(d.evidence) for d in replies)
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
    # Nothing is loaded from elsewhere; links out (to posted replies) are only followed.
    assert not re.search(r'src="https?://', page)


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
        evidence = session.scalars(
            select(EvidenceRow)
            .join(DecisionRow)
            .where(DecisionRow.request_id == world.ids["posted_as_is"])
        ).first()
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


def _rows_linked_from(page: str, key: str) -> list[int]:
    """The request ids the table row of a figure's key links to."""
    row = re.search(rf'<tr id="{anchor(key)}">(.*?)</tr>', page, re.S)
    assert row is not None, key
    return [int(i) for i in re.findall(r'href="#r(\d+)"', row.group(1))]


def test_posted_replies_are_listed_with_links_to_the_platform(db: Database) -> None:
    world = seed(db)
    with db.transaction() as session:
        on_x = session.get(Request, world.ids["posted_edited"])
        on_bsky = session.get(Request, world.ids["posted_as_is"])
        assert on_x is not None and on_bsky is not None
        on_x.platform, on_x.reply_id = "x", "1790000000000000001"
        on_bsky.platform = "bluesky"
        on_bsky.reply_id = "at://did:plc:abc123/app.bsky.feed.post/3kreply"
    page = render_html(collect(db))
    listed = re.findall(r'<tr data-posted="(\d+)">(.*?)</tr>', page, re.S)
    assert sorted(int(i) for i, _ in listed) == sorted(
        [world.ids["posted_edited"], world.ids["posted_as_is"]]
    )
    rows = dict(listed)
    assert (
        'href="https://x.com/i/web/status/1790000000000000001"'
        in rows[str(world.ids["posted_edited"])]
    )
    assert (
        'href="https://bsky.app/profile/did:plc:abc123/post/3kreply"'
        in rows[str(world.ids["posted_as_is"])]
    )
    # The post each reply answered, and who approved it.
    assert 'href="https://social.example/posted_edited"' in rows[str(world.ids["posted_edited"])]
    assert "mod_demo" in rows[str(world.ids["posted_edited"])]


def test_reply_links_are_built_only_from_real_platform_ids() -> None:
    assert reply_url("x", "123") == "https://x.com/i/web/status/123"
    assert reply_url("x", "javascript:alert(1)") is None
    assert reply_url("bluesky", "at://did:plc:a/app.bsky.feed.like/1") is None
    assert reply_url("local", "local-abc") is None
    # The answered post's link comes from the platform's data: only web links are links.
    assert post_url(Request(target={"url": "javascript:alert(1)"})) is None
    assert post_url(Request(target={"url": "https://x.com/a/status/1"})) == (
        "https://x.com/a/status/1"
    )


def test_every_figure_drills_down_to_the_requests_behind_it(db: Database) -> None:
    world = seed(db)
    page = render_html(collect(db))
    ids = world.ids
    assert _rows_linked_from(page, "outcome:abstained") == [
        ids["abstain_nee"],
        ids["abstain_guard"],
    ]
    assert _rows_linked_from(page, "abstain:guard: thin_evidence") == [ids["abstain_guard"]]
    assert _rows_linked_from(page, "skip:user opted out") == [ids["skipped"]]
    assert _rows_linked_from(page, "guard:too_long") == [ids["abstain_guard"]]
    assert _rows_linked_from(page, "agreement:rejected") == [ids["rejected"]]
    assert _rows_linked_from(page, "reject:wrong verdict") == [ids["rejected"]]
    assert sorted(_rows_linked_from(page, "tier:high")) == sorted(
        [ids["posted_edited"], ids["posted_as_is"]]
    )
    # Each request id links to a row of the requests table, which holds the full reason.
    for request_id in ids.values():
        assert f'<tr id="r{request_id}">' in page
    row = re.search(rf'<tr id="r{ids["abstain_nee"]}">(.*?)</tr>', page, re.S)
    assert row is not None and "only one weak source" in row.group(1)
    # Every bar of every chart links to a table row that exists.
    targets = re.findall(r'xlink:href="#(k-[0-9a-f]+)"', page)
    assert len(targets) >= 20
    assert all(f'id="{target}"' in page for target in targets)
    assert 'target="_blank"' not in page


def test_moderators_are_listed_with_their_actions_and_time_to_review(db: Database) -> None:
    seed(db)
    shown = figures(render_html(collect(db)))
    assert shown["moderator:mod_demo:approve"] == "1"
    assert shown["moderator:mod_demo:edit"] == "1"
    assert shown["moderator:mod_demo:reject"] == "1"
    assert shown["moderator:mod_demo:requests"] == "2"
    assert shown["moderator:admin_demo:approve"] == "1"
    # The seed acts one minute after each request arrived (before any decision was stored).
    assert shown["moderator:mod_demo:median"] == "60 s"
    assert not any(key.startswith("moderator:system") for key in shown)


def test_factnote_check_runs_are_reported_apart_from_bot_traffic(db: Database) -> None:
    specs = default_specs()
    specs.append(Spec("by_hand", RequestState.DRY_RUN, platform=CLI_PLATFORM, mode="dry-run"))
    world = seed(db, specs)
    data = collect(db)
    shown = figures(render_html(data))
    assert shown["total"] == str(len(specs) - 1)
    assert shown["checks"] == "1" and shown["checks:dry_run"] == "1"
    assert world.ids["by_hand"] not in {row.id for row in data.rows}
    assert [row.id for row in data.checks.rows] == [world.ids["by_hand"]]
    assert data.total_cost == pytest.approx(
        sum(s.cost_usd for s in specs if s.status is not None and s.platform != CLI_PLATFORM)
    )


def test_check_runs_are_recorded_under_the_platform_the_report_keeps_apart(db: Database) -> None:
    with db.transaction() as session:
        request = create_cli_request(session, POST)
        assert request.platform == CLI_PLATFORM
    seed(db, [Spec("bot", RequestState.DRY_RUN, mode="dry-run")])
    counts = overview(db)
    assert counts.by_state == {"dry_run": 1} and counts.cli_checks == 1


def test_time_to_review_counts_from_the_request_s_move_into_review(db: Database) -> None:
    world = seed(db)
    request_id = world.ids["posted_as_is"]
    with db.transaction() as session:
        acted = session.scalars(
            select(ReviewAction.created_at).where(ReviewAction.request_id == request_id)
        ).one()
        session.add(
            RequestEvent(
                request_id=request_id,
                at=acted - timedelta(minutes=30),
                from_state="processing",
                to_state="awaiting_review",
                actor="worker:w1",
            )
        )
    shown = figures(render_html(collect(db)))
    assert shown["moderator:admin_demo:median"] == "30 min"
    assert shown["moderator:mod_demo:median"] == "60 s"  # no event: from its arrival


def test_figures_read_a_batch_at_a_time_equal_those_read_at_once(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report reads requests a batch at a time so that its memory does not grow with
    history; merged, the batches give the very page one batch gives."""
    world = seed(db)
    with db.transaction() as session:
        session.add(
            ReviewAction(request_id=world.ids["review_x"], actor="mod_demo", action="escalate")
        )
    now = world.now + timedelta(hours=1)
    whole = render_html(collect(db, now=now))
    monkeypatch.setattr(report_module, "BATCH", 2)
    batched = collect(db, now=now)
    assert batched.total == len(world.ids)
    assert render_html(batched) == whole
