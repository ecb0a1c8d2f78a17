"""The audit report's Community Notes section (issue 11): notes written by state and X status,
the test-mode share, the evaluators' buckets and helpful / not helpful once rated, on a seeded
database."""

from __future__ import annotations

import html
import re
from datetime import timedelta

from bot.reports.audit import collect, render_html
from bot.reports.notes import AWAITING, rating_of
from storage.db import Database
from storage.models import XNote, XNoteEvaluation
from tests.bot.web.seed import seed

HIGH = {"UrlValidity": "High", "HarassmentAbuse": "High", "ClaimOpinion": "Medium"}


def figures(page: str) -> dict[str, str]:
    return {
        html.unescape(k): v.strip() for k, v in re.findall(r'data-key="([^"]+)">([^<]*)<', page)
    }


def _note(post: str, state: str, request_id: int | None, **fields: object) -> XNote:
    base: dict[str, object] = {
        "post_id": post,
        "test_mode": True,
        "request_id": request_id,
        "state": state,
        "classification": "misinformed_or_potentially_misleading",
        "misleading_tags": ["factual_error"],
        "text": f"Note on {post}",
        "buckets": {},
    }
    return XNote(**{**base, **fields})


def _seed_notes(db: Database) -> list[int]:
    world = seed(db)
    ids = [world.ids["review_x"], world.ids["dry_run"], world.ids["rejected"]]
    with db.transaction() as session:
        session.add_all(
            [
                _note("1", "submitted", ids[0], status="currently_rated_helpful", buckets=HIGH),
                _note(
                    "2",
                    "submitted",
                    ids[1],
                    status="currently_rated_not_helpful",
                    buckets={**HIGH, "ClaimOpinion": "Low"},
                    misleading_tags=["factual_error", "missing_important_context"],
                ),
                _note("3", "submitted", ids[2], status="needs_more_ratings", test_mode=False),
                _note("4", "submitted", None),  # not synced yet
                _note("5", "intent", None),
                _note("6", "prepared", None),
                XNoteEvaluation(post_id="1", text_sha256="a", test_mode=True, score=0.9),
                XNoteEvaluation(post_id="2", text_sha256="b", test_mode=True, score=0.3),
                XNoteEvaluation(post_id="5", text_sha256="c", test_mode=True, error="HTTP 500"),
            ]
        )
    return ids


def test_the_report_counts_notes_by_state_status_rating_and_bucket(db: Database) -> None:
    ids = _seed_notes(db)
    data = collect(db)
    page = render_html(data)
    shown = figures(page)
    assert (shown["notes:drafted"], shown["notes:submitted"]) == ("6", "4")
    assert (shown["notes:test_mode"], shown["notes:test_share"]) == ("3", "75%")
    assert shown["note:submitted"] == "4" and shown["note:intent"] == "1"
    assert shown["note:prepared"] == "1"
    assert shown["note_status:currently_rated_helpful"] == "1"
    assert shown["note_status:not synced yet"] == "1"
    assert shown["note_rating:helpful"] == "1" and shown["note_rating:not helpful"] == "1"
    assert shown[f"note_rating:{AWAITING}"] == "2"
    assert shown["notes:bucket:ClaimOpinion:low"] == "1"
    assert shown["notes:bucket:ClaimOpinion:medium"] == "1"
    assert shown["notes:bucket:UrlValidity:high"] == "2"
    assert shown["notes:tag:factual_error"] == "6"
    assert shown["notes:tag:missing_important_context"] == "1"
    assert (shown["notes:evaluated"], shown["notes:median_score"]) == ("3", "0.60")
    assert data.drill.get("note_rating:helpful") == [ids[0]]  # links to the request rows
    assert "Submitted notes by rating" in page  # the chart


def test_the_period_excludes_older_notes_and_says_when_there_are_none(db: Database) -> None:
    world = seed(db)
    with db.transaction() as session:
        session.add(_note("old", "submitted", None, drafted_at=world.now - timedelta(days=30)))
    recent = figures(render_html(collect(db, since=world.now - timedelta(days=1))))
    assert "notes:drafted" not in recent and "notes:none" in recent
    everything = figures(render_html(collect(db)))
    assert everything["notes:drafted"] == "1"


def test_x_statuses_map_to_ratings() -> None:
    assert rating_of("currently_rated_helpful") == "helpful"
    assert rating_of("CURRENTLY_RATED_NOT_HELPFUL") == "not helpful"
    assert rating_of("needs_more_ratings") == AWAITING
    assert rating_of(None) == AWAITING
