"""Migration 0014: memory items get a status and their provenance. Items learned only from
moderators' edits and rejections stay in use; every other existing item becomes proposed, so
what the bot learned from strangers' posts before the upgrade waits for a person too."""

from __future__ import annotations

from alembic import command
from sqlalchemy import text

from storage.db import Database, alembic_config
from storage.models import ReviewAction
from storage.repositories import create_cli_request
from testing.scenarios import POST

ROW = (
    "INSERT INTO memory_items (id, phase, trigger, strategy, kind, sources, created_at, uses,"
    " weight, disabled) VALUES (:id, 'writing', 't', 's', 'reuse', :sources,"
    " '2026-12-01 00:00:00', 0, 1.0, false)"
)


def test_existing_items_are_sorted_by_who_taught_them(main_db: Database) -> None:
    url = main_db.engine.url.render_as_string(hide_password=False)
    # The request and its review actions are written at the head (the models are the head's)
    # and survive the downgrade; only the memory items are written in 0013's shape.
    with main_db.transaction() as session:
        request = create_cli_request(session, POST)
        actions = [
            ReviewAction(request_id=request.id, actor="mod", action=action, detail={})
            for action in ("edit", "reject", "approve")
        ]
        session.add_all(actions)
        session.flush()
        edit, reject, approve = (f"review:{a.id}" for a in actions)
    command.downgrade(alembic_config(url), "0013")
    with main_db.engine.begin() as connection:
        items = {
            "edited": f'["{edit}", "{reject}"]',
            "approved": f'["{approve}"]',
            "judged": '["decision:7"]',
            "mixed": f'["{edit}", "decision:7"]',
            "imported": '["import:2026-11-30T10:00:00"]',
        }
        for item_id, sources in items.items():
            connection.execute(text(ROW), {"id": item_id, "sources": sources})
    command.upgrade(alembic_config(url), "head")
    with main_db.engine.connect() as connection:
        rows = connection.execute(text("SELECT id, status, origin FROM memory_items")).all()
    assert sorted(tuple(r) for r in rows) == [
        ("approved", "proposed", "approve"),
        ("edited", "approved", "edit"),
        ("imported", "proposed", "import"),
        ("judged", "proposed", "judge"),
        ("mixed", "proposed", "edit"),
    ]
