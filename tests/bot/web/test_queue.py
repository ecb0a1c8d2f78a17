"""The queue's filters, order, counts and deadlines, and the decisions log's search."""

from __future__ import annotations

import re
from datetime import timedelta

from storage.models import Request
from tests.bot.web.app_env import AppEnv, Session


def _queue_ids(html: str) -> list[int]:
    return [int(i) for i in re.findall(r'<tr class="[^"]*" data-id="(\d+)"', html)]


def _log_ids(html: str) -> list[int]:
    return [int(i) for i in re.findall(r'<tr data-id="(\d+)"', html)]


def test_queue_lists_awaiting_items_oldest_first_by_default(
    app_env: AppEnv, moderator: Session
) -> None:
    ids = app_env.world.ids
    html = moderator.client.get("/queue").text
    # ages: review_x 30 h, review_local 3 h, review_bsky 1 h
    assert _queue_ids(html) == [ids["review_x"], ids["review_local"], ids["review_bsky"]]
    newest = moderator.client.get("/queue", params={"order": "newest"}).text
    assert _queue_ids(newest) == [ids["review_bsky"], ids["review_local"], ids["review_x"]]


def test_queue_filters(app_env: AppEnv, moderator: Session) -> None:
    ids = app_env.world.ids

    def queue(**params: str) -> list[int]:
        return _queue_ids(moderator.client.get("/queue", params=params).text)

    assert queue(platform="bluesky") == [ids["review_bsky"]]
    assert queue(verdict="misleading") == [ids["review_x"]]
    assert queue(verdict="refuted") == [ids["review_local"], ids["review_bsky"]]
    assert queue(tier="high") == [ids["review_local"]]
    assert queue(tier="medium") == [ids["review_bsky"]]
    assert queue(tier="low") == [ids["review_x"]]
    assert queue(requester="@bob") == [ids["review_x"]]
    assert queue(min_age_h="24") == [ids["review_x"]]
    assert queue(max_age_h="2") == [ids["review_bsky"]]
    assert queue(min_age_h="2", max_age_h="24") == [ids["review_local"]]
    assert queue(platform="local", verdict="misleading") == []
    assert queue(min_age_h="not a number") == queue()  # ignored, not an error


def test_queue_shows_counts_per_state_and_each_deadline(
    app_env: AppEnv, moderator: Session
) -> None:
    html = moderator.client.get("/queue").text
    with app_env.db.session() as session:
        rows = session.query(Request).all()
        expected = {
            state: sum(1 for r in rows if r.state == state) for state in {r.state for r in rows}
        }
        deadlines = {r.id: r.review_deadline for r in rows if r.state == "awaiting_review"}
    shown = {s: int(n) for s, n in re.findall(r'data-state="(\w+)">(\d+)<', html)}
    assert {s: n for s, n in shown.items() if n} == expected
    for deadline in deadlines.values():
        assert deadline is not None
        assert deadline.strftime("%Y-%m-%d %H:%M UTC") in html


def test_an_overdue_item_is_marked(app_env: AppEnv, moderator: Session) -> None:
    rid = app_env.world.ids["review_x"]
    with app_env.db.transaction() as session:
        row = session.get(Request, rid)
        assert row is not None and row.review_deadline is not None
        row.review_deadline = row.created_at + timedelta(hours=1)
    html = moderator.client.get("/queue").text
    assert re.search(rf'<tr class="overdue" data-id="{rid}"', html)


def test_decisions_log_lists_every_request_with_a_permalink(
    app_env: AppEnv, moderator: Session
) -> None:
    html = moderator.client.get("/decisions").text
    assert sorted(_log_ids(html)) == sorted(app_env.world.ids.values())
    for rid in app_env.world.ids.values():
        assert f'href="/requests/{rid}"' in html
        assert moderator.client.get(f"/requests/{rid}").status_code == 200
    assert moderator.client.get("/requests/99999").status_code == 404


def test_decisions_log_search(app_env: AppEnv, moderator: Session) -> None:
    ids = app_env.world.ids

    def log(**params: str) -> list[int]:
        return sorted(_log_ids(moderator.client.get("/decisions", params=params).text))

    assert log(q="my aunt") == [ids["review_x"]]  # the checked post's text
    assert log(q="CLAIMER_REVIEW_BSKY") == [ids["review_bsky"]]  # case-insensitive
    assert log(q="opted out") == [ids["skipped"]]  # the reason
    assert log(q="100%") == []  # LIKE wildcards are literal
    assert log(platform="x") == [ids["review_x"]]
    assert log(state="abstained") == sorted([ids["abstain_nee"], ids["abstain_guard"]])
    assert log(verdict="not_enough_evidence") == [ids["abstain_nee"]]
    today = app_env.world.now.date()
    until = today - timedelta(days=2)
    with app_env.db.session() as session:
        created = {r.id: r.created_at.date() for r in session.query(Request)}
    old = sorted(i for i, day in created.items() if day <= until)
    assert ids["dry_run"] in old  # 50 hours old
    assert log(until=until.isoformat()) == old
    assert log(since=today.isoformat()) == sorted(i for i, d in created.items() if d >= today)
    assert ids["dry_run"] not in log(since=today.isoformat())


def test_decisions_log_finds_non_ascii_text(app_env: AppEnv, moderator: Session) -> None:
    rid = app_env.world.ids["review_local"]
    with app_env.db.transaction() as session:
        row = session.get(Request, rid)
        assert row is not None
        row.target = {**(row.target or {}), "text": "Le citron tue la grippe, prétend-il."}
    html = moderator.client.get("/decisions", params={"q": "prétend"}).text
    assert _log_ids(html) == [rid]
