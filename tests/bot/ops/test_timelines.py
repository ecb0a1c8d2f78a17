"""The authority timeline pull: through the adapter, into the authority index, incrementally."""

from __future__ import annotations

import json
from pathlib import Path

from adapters.local import LocalAdapter
from bot.ops.timelines import pull_timelines
from pipeline.config import AuthorityAccount, PipelineConfig
from testing import indexes


def _inbox(folder: Path, posts: list[tuple[str, str, str]]) -> None:
    folder.mkdir(exist_ok=True)
    for sid, author, text in posts:
        item = {
            "id": f"s{sid}",
            "author": "asker_demo",
            "text": "@factnote?",
            "created_at": "2026-11-29T09:00:00Z",
            "parent": {
                "id": sid,
                "author": author,
                "text": text,
                "created_at": f"2026-11-{int(sid):02d}T08:00:00Z",
            },
            "quoted": None,
            "images": [],
        }
        (folder / f"{sid}.json").write_text(json.dumps(item), encoding="utf-8")


def test_pull_stores_only_registry_accounts_and_only_new_posts(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    _inbox(
        inbox,
        [
            ("10", "health_ministry_demo", "Lemon water does not kill the flu virus."),
            ("11", "random_person_demo", "I love lemon water."),
        ],
    )
    cfg = PipelineConfig()
    cfg.authority.path = str(tmp_path / "authority.sqlite")
    cfg.authority.accounts = [
        AuthorityAccount(platform="local", handle="health_ministry_demo", topics=["health"])
    ]
    shared = indexes.build_parts(cfg, index_path=tmp_path / "index.sqlite")
    adapters = {"local": LocalAdapter(inbox, tmp_path / "outbox.jsonl")}
    try:
        first = pull_timelines(shared, adapters)
        assert first.new == {"local:health_ministry_demo": 1}
        assert shared.authority_index is not None
        again = pull_timelines(shared, adapters)
        assert again.new == {"local:health_ministry_demo": 0}
        _inbox(inbox, [("12", "health_ministry_demo", "Flu vaccines are free this winter.")])
        third = pull_timelines(shared, adapters)
        assert third.new == {"local:health_ministry_demo": 1}
        latest = shared.authority_index.latest("local", "health_ministry_demo")
        assert latest is not None and latest.post_id == "12"
    finally:
        shared.close()


def test_accounts_on_platforms_without_an_adapter_are_not_pulled(tmp_path: Path) -> None:
    cfg = PipelineConfig()
    cfg.authority.path = str(tmp_path / "authority.sqlite")
    cfg.authority.accounts = [AuthorityAccount(platform="x", handle="someone_demo")]
    shared = indexes.build_parts(cfg, index_path=tmp_path / "index.sqlite")
    try:
        report = pull_timelines(shared, {"local": LocalAdapter(tmp_path, tmp_path / "o.jsonl")})
        assert report.new == {} and shared.authority_index is None
        assert not (tmp_path / "authority.sqlite").exists()
    finally:
        shared.close()
