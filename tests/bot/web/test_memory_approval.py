"""Proposed memory items on the Memory page (issue 33): a moderator approves or rejects one
(with the CSRF token, recorded with who and why), and only then does a running bot's bank
retrieve it; a refused item (it copied a stranger) cannot be approved."""

from __future__ import annotations

from bot.memory import store as memory_store
from bot.memory.store import StoredMemory
from pipeline.config import MemoryConfig
from pipeline.learning.memory import MemoryItem, Phase
from storage.models import MemoryItemRow
from tests.bot.web.app_env import MODERATOR, AppEnv, Session

QUERY = "lemon water kills the flu virus"


def _propose(app_env: AppEnv, **kw: object) -> MemoryItem:
    item = MemoryItem(
        phase=Phase.WRITING,
        trigger="lemon water flu virus remedy claims",
        strategy="Cite the health agency's page on home remedies first.",
        kind="reuse",
        sources=["decision:1"],
        **kw,  # type: ignore[arg-type]
    )
    StoredMemory(app_env.db, MemoryConfig()).learn([item], "decision:1")
    return item


def _status(app_env: AppEnv, item_id: str) -> str:
    with app_env.db.session() as session:
        row = session.get(MemoryItemRow, item_id)
        assert row is not None
        return row.status


def test_a_moderator_approves_a_proposed_item_and_a_running_bank_then_retrieves_it(
    app_env: AppEnv, moderator: Session
) -> None:
    proposed = _propose(app_env)
    running = StoredMemory(app_env.db, MemoryConfig(), refresh_s=0)
    assert running.search(Phase.WRITING, QUERY, 3) == []  # proposed: no check sees it
    listed = moderator.client.get("/admin/memory", params={"status": "proposed"}).text
    assert f'data-item="{proposed.id}" data-status="proposed"' in listed
    assert "1 proposed item(s) waiting" in listed
    page = moderator.client.get(f"/admin/memory/{proposed.id}").text
    assert "not reviewed by a person" in page and 'id="approve"' in page
    done = moderator.post(
        f"/admin/memory/{proposed.id}/decide", decision="approve", reason="general enough"
    )
    assert done.status_code == 303
    assert _status(app_env, proposed.id) == "approved"
    assert [i.id for i, _ in running.search(Phase.WRITING, QUERY, 3)] == [proposed.id]
    page = moderator.client.get(f"/admin/memory/{proposed.id}").text
    assert f"approved by {MODERATOR}" in page and "general enough" in page
    assert "approved by a moderator on" in page  # the provenance a prompt shows
    change = memory_store.governance_log(app_env.db, proposed.id)[0]
    assert (change.actor, change.old_value, change.new_value) == (
        MODERATOR,
        "proposed",
        "approved",
    )


def test_a_rejected_item_is_never_retrieved(app_env: AppEnv, moderator: Session) -> None:
    proposed = _propose(app_env)
    done = moderator.post(
        f"/admin/memory/{proposed.id}/decide", decision="reject", reason="copies a claim"
    )
    assert done.status_code == 303
    assert _status(app_env, proposed.id) == "rejected"
    bank = StoredMemory(app_env.db, MemoryConfig(use_proposed=True))
    assert bank.search(Phase.WRITING, QUERY, 3) == []


def test_a_decision_without_the_csrf_token_is_refused(app_env: AppEnv, moderator: Session) -> None:
    proposed = _propose(app_env)
    url = f"/admin/memory/{proposed.id}/decide"
    refused = moderator.client.post(url, data={"decision": "approve", "csrf_token": "x"})
    assert refused.status_code == 403
    assert moderator.client.post(url, data={"decision": "approve"}).status_code == 403
    assert _status(app_env, proposed.id) == "proposed"
    assert memory_store.governance_log(app_env.db) == []


def test_signed_out_visitors_cannot_decide(app_env: AppEnv) -> None:
    proposed = _propose(app_env)
    client = app_env.client()
    page = client.get("/admin/memory", follow_redirects=False)
    assert page.status_code in (302, 303, 307) and "/login" in page.headers["location"]
    assert client.post(f"/admin/memory/{proposed.id}/decide").status_code == 403  # no token
    assert _status(app_env, proposed.id) == "proposed"


def test_a_refused_item_cannot_be_approved(app_env: AppEnv, moderator: Session) -> None:
    refused = _propose(
        app_env, status="refused", decided_by="copy check", reason='copies the post: "a b c"'
    )
    page = moderator.client.get(f"/admin/memory/{refused.id}").text
    assert 'id="refused"' in page and 'id="approve"' not in page
    moderator.post(f"/admin/memory/{refused.id}/decide", decision="approve")
    assert _status(app_env, refused.id) == "refused"
    flashed = moderator.client.get(f"/admin/memory/{refused.id}").text
    assert "Not changed" in flashed and "copies the post" in flashed
