"""The local adapter's inbox and outbox: bad entries are skipped summons, never exceptions, and
never take a valid summons' id; torn outbox lines hide no other reply."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from adapters.base import Summons, TargetStatus
from adapters.local import LocalAdapter
from bot.requests.intake import poll
from storage.db import Database
from storage.models import Request


def entry(sid: str, text: str = "@factnote is this true?") -> dict[str, Any]:
    return {
        "id": sid,
        "author": "asker_demo",
        "text": text,
        "created_at": "2026-11-29T09:00:00Z",
        "parent": {
            "id": f"p{sid}",
            "author": "claimer_demo",
            "text": "Hot lemon water kills the flu virus.",
            "created_at": "2026-11-29T08:00:00Z",
        },
    }


def by_id(summons: list[Summons]) -> dict[str, Summons]:
    return {s.id: s for s in summons}


def deeply_nested(depth: int = 100_000) -> str:
    return json.dumps(entry("deep"))[:-1] + ', "images": ' + "[" * depth + "]" * depth + "}"


def test_unreadable_files_are_skipped_summons_and_the_others_are_read(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "1.json").write_text(json.dumps(entry("1")), encoding="utf-8")
    (inbox / "latin1.json").write_bytes(
        json.dumps(entry("2", "caf\u00e9"), ensure_ascii=False).encode("latin-1")
    )
    (inbox / "folder.json").mkdir()
    (inbox / "deep.json").write_text(deeply_nested(), encoding="utf-8")
    os.mkfifo(inbox / "pipe.json")  # reading it would block the poll forever

    found = by_id(LocalAdapter(inbox, tmp_path / "outbox.jsonl").fetch_summons(None).summons)

    assert found["1"].target_status is TargetStatus.OK
    reasons = {
        key: found[key].target_reason
        for key in (
            "malformed:latin1.json",
            "malformed:folder.json",
            "malformed:deep.json",
            "malformed:pipe.json",
        )
    }
    assert all(found[key].target_status is TargetStatus.UNAVAILABLE for key in reasons)
    assert "not UTF-8" in reasons["malformed:latin1.json"]
    assert "not a regular file" in reasons["malformed:folder.json"]
    assert "recursion limit" in reasons["malformed:deep.json"]
    assert "not a regular file" in reasons["malformed:pipe.json"]
    assert len(found) == 5


def test_jsonl_inbox_skips_bad_lines_by_line_number(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox.jsonl"
    lines = [
        json.dumps(entry("1")).encode(),
        json.dumps(entry("2", "caf\u00e9"), ensure_ascii=False).encode("latin-1"),
        deeply_nested().encode(),
        # U+2028 is valid inside a JSON string; it must not split the line in two.
        json.dumps(entry("4", "one\u2028two"), ensure_ascii=False).encode(),
    ]
    inbox.write_bytes(b"\n".join(lines) + b"\n")

    found = by_id(LocalAdapter(inbox, tmp_path / "outbox.jsonl").fetch_summons(None).summons)

    assert set(found) == {"1", "malformed:inbox.jsonl:2", "malformed:inbox.jsonl:3", "4"}
    assert "not UTF-8" in found["malformed:inbox.jsonl:2"].target_reason
    assert found["4"].text == "one\u2028two"


def test_a_malformed_entry_is_keyed_by_its_place_not_by_the_id_it_carries(
    tmp_path: Path,
) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "0-broken.json").write_text('{"id": "9", "text": 5}', encoding="utf-8")
    (inbox / "9.json").write_text(json.dumps(entry("9")), encoding="utf-8")

    found = by_id(LocalAdapter(inbox, tmp_path / "outbox.jsonl").fetch_summons(None).summons)

    assert found["9"].target_status is TargetStatus.OK
    broken = found["malformed:0-broken.json"]
    assert broken.target_status is TargetStatus.UNAVAILABLE
    assert "(id '9')" in broken.target_reason


def test_undecodable_names_and_ids_become_text_a_database_can_store(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / os.fsdecode(b"bad\xff.json")).write_text('{"id": "\\ud800"}', encoding="utf-8")

    [summons] = LocalAdapter(inbox, tmp_path / "outbox.jsonl").fetch_summons(None).summons

    summons.id.encode("utf-8")  # raises on a lone surrogate
    summons.target_reason.encode("utf-8")
    assert summons.id.startswith("malformed:bad")


def test_a_reply_after_a_torn_outbox_line_is_still_found(tmp_path: Path) -> None:
    outbox = tmp_path / "outbox.jsonl"
    adapter = LocalAdapter(tmp_path / "inbox", outbox)
    first = adapter.post_reply(Summons.model_validate(entry("1") | {"platform": "local"}), "ok")
    # A crash mid-write: half a line, cut inside a two-byte character, no newline.
    with outbox.open("ab") as handle:
        handle.write('{"reply_id": "local-x", "in_reply_to": "2", "text": "caf\u00e9'.encode()[:-1])

    second = adapter.post_reply(Summons.model_validate(entry("3") | {"platform": "local"}), "ok")

    assert [r["reply_id"] for r in adapter.replies()] == [first.reply_id, second.reply_id]
    found = adapter.find_reply(Summons.model_validate(entry("3") | {"platform": "local"}))
    assert found is not None and found.reply_id == second.reply_id


def test_a_nul_character_or_an_overlong_id_makes_a_skipped_summons_not_a_failed_poll(
    tmp_path: Path,
) -> None:
    # Issue 33: on PostgreSQL (text cannot hold U+0000) such entries failed every poll.
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    nul_author = entry("1")
    nul_author["parent"]["author"] = "claimer\u0000demo"
    (inbox / "1.json").write_text(json.dumps(nul_author), encoding="utf-8")
    (inbox / "2.json").write_text(json.dumps(entry("x" * 129)), encoding="utf-8")
    (inbox / "3.json").write_text(json.dumps(entry("3")), encoding="utf-8")

    found = by_id(LocalAdapter(inbox, tmp_path / "outbox.jsonl").fetch_summons(None).summons)

    assert found["3"].target_status is TargetStatus.OK
    nul = found["malformed:1.json"]
    assert nul.target_status is TargetStatus.UNAVAILABLE
    assert "parent.author: Value error, contains a NUL character (U+0000)" in nul.target_reason
    long_id = found["malformed:2.json"]
    assert "id: String should have at most 128 characters" in long_id.target_reason
    assert all("\x00" not in s.model_dump_json() for s in found.values())


@pytest.mark.postgres
def test_on_postgresql_a_poll_stores_them_as_skipped_requests(
    pg_db: Database, tmp_path: Path
) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    nul = entry("1", text="@factnote \u0000 is this true?")
    (inbox / "1.json").write_text(json.dumps(nul), encoding="utf-8")
    (inbox / "2.json").write_text(json.dumps(entry("y" * 200)), encoding="utf-8")
    (inbox / "3.json").write_text(json.dumps(entry("3")), encoding="utf-8")
    adapter = LocalAdapter(inbox, tmp_path / "outbox.jsonl")
    for _ in range(2):  # polled again: nothing new, and no error either time
        result = poll(adapter, pg_db, "dry-run")
        assert result.error is None
    with pg_db.session() as session:
        rows = {r.summons_id: r for r in session.scalars(select(Request))}
    assert set(rows) == {"malformed:1.json", "malformed:2.json", "3"}
    # Stored with the reason; triage then skips them (target unavailable).
    for key, reason in (("malformed:1.json", "NUL character"), ("2.json", "128 characters")):
        stored = rows[key if key.startswith("malformed") else f"malformed:{key}"].summons
        assert stored["target_status"] == TargetStatus.UNAVAILABLE.value
        assert reason in stored["target_reason"]


def test_a_summons_videos_are_media_with_their_own_file(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    data = entry("v1") | {"videos": ["inbox/clip.mp4", "https://cdn.example/a.mp4"]}
    (inbox / "v1.json").write_text(json.dumps(data), encoding="utf-8")
    [summons] = LocalAdapter(inbox, tmp_path / "outbox.jsonl").fetch_summons(None).summons
    assert summons.target is not None
    videos = [(m.kind, m.video_url) for m in summons.target.media]
    assert videos == [("video", "inbox/clip.mp4"), ("video", "https://cdn.example/a.mp4")]
