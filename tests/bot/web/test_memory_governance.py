"""The admins' memory page (issue 17, "Governance"): list, search, source episodes, disable,
enable and delete, recorded with who did it, and what a running bot then retrieves."""

from __future__ import annotations

from sqlalchemy import select

from bot.memory import store as memory_store
from bot.memory.store import StoredMemory
from pipeline.config import MemoryConfig
from pipeline.learning.memory import MemoryItem, Phase
from storage.models import DecisionRow, MemoryItemRow, ReviewAction
from tests.bot.web.app_env import ADMIN, AppEnv, Session

QUERY = "lemon water kills the flu virus"


def _seed_items(app_env: AppEnv) -> tuple[MemoryItem, MemoryItem]:
    """One writing item learned from a moderator's action and a judged decision on the
    `rejected` request, and one unrelated search item."""
    request_id = app_env.world.ids["rejected"]
    with app_env.db.session() as session:
        action_id = session.scalars(
            select(ReviewAction.id).where(ReviewAction.request_id == request_id)
        ).first()
        decision_id = session.scalars(
            select(DecisionRow.id).where(DecisionRow.request_id == request_id)
        ).first()
    assert action_id is not None and decision_id is not None
    lemon = MemoryItem(
        phase=Phase.WRITING,
        trigger="lemon water flu virus remedy claims",
        strategy="Cite the health agency first; blogs were rejected.",
        kind="avoid",
        status="approved",
        sources=[f"review:{action_id}", f"decision:{decision_id}"],
    )
    other = MemoryItem(
        phase=Phase.SEARCH,
        trigger="election turnout statistics",
        strategy="Search the electoral commission's own tables.",
        kind="reuse",
        status="approved",
        sources=["import:2026-11-30T10:00:00"],
    )
    memory = StoredMemory(app_env.db, MemoryConfig())
    memory.learn([lemon], f"review:{action_id}")
    memory.learn([other], "import:2026-11-30T10:00:00")
    return lemon, other


def _stored(app_env: AppEnv, item_id: str) -> MemoryItemRow | None:
    with app_env.db.session() as session:
        return session.get(MemoryItemRow, item_id)


def test_admin_lists_and_searches_items_and_sees_the_memory_mode(
    app_env: AppEnv, admin: Session
) -> None:
    lemon, other = _seed_items(app_env)
    page = admin.client.get("/admin/memory")
    assert page.status_code == 200
    assert "Memory mode: <b>learn</b>" in page.text
    assert lemon.trigger in page.text and other.trigger in page.text
    assert 'href="/admin/memory"' in admin.client.get("/queue").text  # the nav link
    found = admin.client.get("/admin/memory", params={"q": "LEMON"}).text
    assert lemon.trigger in found and other.trigger not in found
    by_phase = admin.client.get("/admin/memory", params={"phase": "search"}).text
    assert other.trigger in by_phase and lemon.trigger not in by_phase
    none = admin.client.get("/admin/memory", params={"q": "no such words"}).text
    assert "No item matches." in none


def test_item_page_links_its_source_episodes_to_their_requests(
    app_env: AppEnv, admin: Session
) -> None:
    lemon, other = _seed_items(app_env)
    request_id = app_env.world.ids["rejected"]
    page = admin.client.get(f"/admin/memory/{lemon.id}").text
    assert lemon.strategy.replace("'", "&#39;") in page
    assert page.count(f'href="/requests/{request_id}"') == 2  # the action and the decision
    assert "judged decision" in page and "by " in page
    imported = admin.client.get(f"/admin/memory/{other.id}").text
    assert "imported from another deployment" in imported
    assert admin.client.get(f"/admin/memory/{'f' * 32}").status_code == 404


def test_moderators_see_the_memory_pages_but_are_refused_disable_and_delete(
    app_env: AppEnv, moderator: Session
) -> None:
    lemon, _ = _seed_items(app_env)
    assert moderator.client.get("/admin/memory").status_code == 200  # to approve proposals
    page = moderator.client.get(f"/admin/memory/{lemon.id}").text
    assert 'id="toggle"' not in page and 'id="delete"' not in page
    assert moderator.post(f"/admin/memory/{lemon.id}/disable").status_code == 403
    assert moderator.post(f"/admin/memory/{lemon.id}/delete", confirmed="yes").status_code == 403
    row = _stored(app_env, lemon.id)
    assert row is not None and not row.disabled
    assert 'href="/admin/memory"' in moderator.client.get("/queue").text


def test_changes_without_the_csrf_token_are_refused(app_env: AppEnv, admin: Session) -> None:
    lemon, _ = _seed_items(app_env)
    url = f"/admin/memory/{lemon.id}"
    assert admin.client.post(f"{url}/disable", follow_redirects=False).status_code == 403
    refused = admin.client.post(f"{url}/delete", data={"confirmed": "yes", "csrf_token": "x"})
    assert refused.status_code == 403
    row = _stored(app_env, lemon.id)
    assert row is not None and not row.disabled
    assert memory_store.governance_log(app_env.db) == []


def test_disable_stops_retrieval_in_a_running_bank_and_enable_restores_it(
    app_env: AppEnv, admin: Session
) -> None:
    lemon, _ = _seed_items(app_env)
    running = StoredMemory(app_env.db, MemoryConfig(), refresh_s=0)  # a bot's, loaded before
    assert [i.id for i, _ in running.search(Phase.WRITING, QUERY, 3)] == [lemon.id]
    response = admin.post(f"/admin/memory/{lemon.id}/disable")
    assert response.status_code == 303 and response.headers["location"].endswith(lemon.id)
    assert running.search(Phase.WRITING, QUERY, 3) == []
    running.record_uses([lemon.id], lemon.created)  # the bot's own write keeps it disabled
    row = _stored(app_env, lemon.id)
    assert row is not None and row.disabled
    assert 'id="item-status">disabled' in admin.client.get(f"/admin/memory/{lemon.id}").text
    admin.post(f"/admin/memory/{lemon.id}/enable")
    assert [i.id for i, _ in running.search(Phase.WRITING, QUERY, 3)] == [lemon.id]
    log = memory_store.governance_log(app_env.db, lemon.id)
    assert [(c.actor, c.old_value, c.new_value) for c in log] == [
        (ADMIN, "disabled", "enabled"),
        (ADMIN, "enabled", "disabled"),
    ]


def test_delete_asks_first_then_removes_the_item_for_good(app_env: AppEnv, admin: Session) -> None:
    lemon, other = _seed_items(app_env)
    running = StoredMemory(app_env.db, MemoryConfig(), refresh_s=0)
    asked = admin.post(f"/admin/memory/{lemon.id}/delete")
    assert asked.status_code == 200 and "Delete this memory item for good?" in asked.text
    assert _stored(app_env, lemon.id) is not None
    done = admin.post(f"/admin/memory/{lemon.id}/delete", confirmed="yes")
    assert done.status_code == 303 and done.headers["location"] == "/admin/memory"
    assert _stored(app_env, lemon.id) is None
    assert running.search(Phase.WRITING, QUERY, 3) == []
    running.record_uses([lemon.id], lemon.created)  # a use recorded late does not revive it
    assert _stored(app_env, lemon.id) is None
    assert _stored(app_env, other.id) is not None
    [change] = memory_store.governance_log(app_env.db)
    assert (change.actor, change.new_value) == (ADMIN, None)
    assert lemon.trigger in change.note
    page = admin.client.get("/admin/memory").text
    assert lemon.trigger not in page.split("Recent changes")[0] and ADMIN in page
