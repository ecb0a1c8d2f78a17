"""The queue at volume: pages with the true count, filters applied before the page is cut,
select-all of the filtered set with its exact count, per-row quick actions, and state counts
that leave `factnote check` runs apart as `factnote status` does."""

from __future__ import annotations

import re

from pipeline.records import Tier
from storage.models import Request, RequestState
from tests.bot.web.app_env import AppEnv, Session
from tests.bot.web.seed import Spec, seed, seed_bot_request_and_check_run


def _queue_ids(html: str) -> list[int]:
    return [int(i) for i in re.findall(r'<tr class="[^"]*" data-id="(\d+)"', html)]


def _count(html: str) -> int:
    found = re.search(r'<span id="queue-count">(\d+)</span>', html)
    assert found is not None
    return int(found.group(1))


def _many(app_env: AppEnv, n: int, name: str = "bulk", **fields: object) -> list[int]:
    specs = [
        Spec(f"{name}_{i}", RequestState.AWAITING_REVIEW, age_h=5 + i / 100, **fields)  # type: ignore[arg-type]
        for i in range(n)
    ]
    world = seed(app_env.db, specs, now=app_env.world.now)
    return [world.ids[s.name] for s in specs]


def _awaiting(app_env: AppEnv) -> set[int]:
    with app_env.db.session() as session:
        return {
            r.id
            for r in session.query(Request).filter(
                Request.state == RequestState.AWAITING_REVIEW.value
            )
        }


def test_queue_pages_state_the_true_count_and_show_every_item_once(
    app_env: AppEnv, moderator: Session
) -> None:
    _many(app_env, 57)
    awaiting = _awaiting(app_env)
    seen: list[int] = []
    for page in (1, 2, 3):
        html = moderator.client.get("/queue", params={"page": str(page), "per_page": "25"}).text
        assert _count(html) == len(awaiting) == 60
        assert f'<span class="page-no">{page}</span> of <span class="page-count">3</' in html
        seen += _queue_ids(html)
    assert len(seen) == len(set(seen)) == 60
    assert set(seen) == awaiting
    last = moderator.client.get("/queue", params={"page": "99", "per_page": "25"}).text
    assert _queue_ids(last) == seen[50:]  # past the end: the last page


def test_tier_filter_counts_every_match_not_only_the_first_page(
    app_env: AppEnv, moderator: Session
) -> None:
    low = _many(app_env, 60, tiers=(Tier.LOW,))
    _many(app_env, 10, "best_high", tiers=(Tier.HIGH, Tier.LOW))  # best tier high: not a match
    html = moderator.client.get("/queue", params={"tier": "low"}).text
    expected = len(low) + 1  # and the seeded review_x
    assert _count(html) == expected
    assert len(_queue_ids(html)) == 50
    second = moderator.client.get("/queue", params={"tier": "low", "page": "2"}).text
    assert len(_queue_ids(second)) == expected - 50
    assert set(_queue_ids(html) + _queue_ids(second)) == {*low, app_env.world.ids["review_x"]}


def test_select_all_acts_on_every_filtered_item_once_its_exact_count_is_confirmed(
    app_env: AppEnv, moderator: Session
) -> None:
    xs = _many(app_env, 55, platform="x")
    back = "/queue?platform=x"
    html = moderator.client.get(back).text
    assert '<b id="every-count">56</b>' in html  # 55 and the seeded review_x
    unconfirmed = moderator.post(
        "/queue/bulk", action="reject", every="filtered", back=back, reason="tone or wording"
    )
    assert unconfirmed.status_code == 200
    assert "Reject 56 items?" in unconfirmed.text
    assert 'name="every" value="filtered"' in unconfirmed.text
    wrong = moderator.post(
        "/queue/bulk", action="reject", every="filtered", back=back, confirmed="55"
    )
    assert wrong.status_code == 200  # the set is not what was confirmed: asked again
    assert _awaiting(app_env) >= set(xs)
    done = moderator.post(
        "/queue/bulk",
        action="reject",
        every="filtered",
        back=back,
        reason="tone or wording",
        confirmed="56",
    )
    assert done.status_code == 303
    left = _awaiting(app_env)
    assert not left & {*xs, app_env.world.ids["review_x"]}
    assert app_env.world.ids["review_bsky"] in left  # another platform: untouched


def test_row_quick_actions_claim_and_reject_and_return_to_the_same_page(
    app_env: AppEnv, moderator: Session
) -> None:
    ids = app_env.world.ids
    back = "/queue?order=newest"
    html = moderator.client.get(back).text
    assert f'formaction="/queue/quick?request_id={ids["review_local"]}"' in html
    claimed = moderator.post(
        f"/queue/quick?request_id={ids['review_local']}", action="claim", back=back
    )
    assert claimed.status_code == 303 and claimed.headers["location"] == back
    assert app_env.request(ids["review_local"]).claimed_by == "mod_demo"
    rejected = moderator.post(
        f"/queue/quick?request_id={ids['review_bsky']}",
        action="reject",
        reason="wrong verdict",
        back=back,
    )
    assert rejected.headers["location"] == back
    assert app_env.request(ids["review_bsky"]).state == RequestState.REJECTED.value
    assert app_env.history(ids["review_bsky"])[-1].detail["reason"] == "wrong verdict"


def test_state_counts_leave_check_runs_apart_as_status_does(
    app_env: AppEnv, moderator: Session
) -> None:
    seed_bot_request_and_check_run(app_env.db)
    html = moderator.client.get("/queue").text
    shown = {s: int(n) for s, n in re.findall(r'data-state="(\w+)">(\d+)<', html)}
    with app_env.db.session() as session:
        rows = session.query(Request).all()
    bot = [r for r in rows if r.platform != "cli"]
    assert sum(shown.values()) == len(bot) == len(rows) - 1
    assert shown["needs_llm"] == sum(1 for r in bot if r.state == "needs_llm")
    assert '<b id="cli-checks">1</b>' in html
