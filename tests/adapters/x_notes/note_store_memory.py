"""A Community Note as the bot leaves it in the store before posting: prepared, with the
classification and tag of a post that states a factual error, and trustworthy sources."""

from __future__ import annotations

from datetime import datetime

from bot.notes.store import SqlNoteStore
from storage.db import Database


def prepare_note(db: Database, post_id: str, text: str, *, at: datetime) -> None:
    SqlNoteStore(db).prepare(
        post_id,
        True,
        request_id=None,
        classification="misinformed_or_potentially_misleading",
        tags=("factual_error",),
        trustworthy=True,
        text=text,
        at=at,
    )
