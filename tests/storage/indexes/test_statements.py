"""The authority statements' rows in SQL (`storage.indexes.statements`), on SQLite and
PostgreSQL: each dialect's insert that skips a post already stored."""

from __future__ import annotations

from pipeline.authority.rows import StatementRow
from storage.db import Database
from storage.indexes import SqlStatementRows

VECTOR = b"\x00\x00\x80?" * 3


def statement(post_id: str, account: str, ts: float) -> StatementRow:
    return {
        "platform": "x",
        "account": account,
        "post_id": post_id,
        "text": f"statement {post_id}",
        "created_at": f"2026-01-01T00:00:{int(ts):02d}+00:00",
        "created_ts": ts,
        "url": f"https://x.com/{account}/status/{post_id}",
        "terms": f"statement {post_id}",
        "embedding": VECTOR,
    }


def test_a_post_stored_meanwhile_is_skipped_not_an_error(main_db: Database) -> None:
    with SqlStatementRows.open(main_db.engine) as rows:
        rows.insert_new([statement("1", "who", 1.0)], dim=3)
        # Another process stored post 1 between this writer's check and its write.
        rows.insert_new([statement("1", "who", 1.0), statement("2", "who", 2.0)], dim=3)
        assert rows.count() == 2
        assert rows.known_posts(["1", "3"]) == {("x", "1")}


def test_candidates_are_the_accounts_statements_before_a_time_newest_first(
    main_db: Database,
) -> None:
    with SqlStatementRows.open(main_db.engine) as rows:
        rows.insert_new(
            [statement("1", "who", 1.0), statement("2", "cdc", 2.0), statement("3", "who", 3.0)],
            dim=3,
        )
        assert rows.accounts() == {"who", "cdc"}
        latest = rows.latest("x", "who")
        assert latest is not None and latest[2] == "3"
        assert [c[0][2] for c in rows.candidates(None, None)] == ["3", "2", "1"]
        found = rows.candidates(["who"], before_ts=3.0)
        assert [(c[0][2], c[1], c[2]) for c in found] == [("1", "statement 1", VECTOR)]
