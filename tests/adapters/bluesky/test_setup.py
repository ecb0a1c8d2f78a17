"""`factnote setup bluesky`: the profile's `bot` self-label."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from atproto import Request
from typer.testing import CliRunner

from adapters.bluesky.adapter import BlueskyAdapter
from tests.adapters.bluesky.helpers import (
    BOT_DID,
    BOT_HANDLE,
    PASSWORD,
    PDS,
    FakePDS,
    load,
)

# ------------------------------------------------------------------ setup bluesky


def test_bot_label_is_added_keeping_the_profile_and_is_idempotent(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    original = load("profile_record.json")

    first = adapter.ensure_bot_label()
    second = adapter.ensure_bot_label()

    assert first.changed is True and second.changed is False
    (put,) = pds.named("com.atproto.repo.putRecord")
    assert put.body is not None
    assert put.body["swapRecord"] == original["cid"]
    assert (put.body["repo"], put.body["collection"], put.body["rkey"]) == (
        BOT_DID,
        "app.bsky.actor.profile",
        "self",
    )
    record = put.body["record"]
    for key in ("displayName", "description", "avatar", "createdAt"):
        assert record[key] == original["value"][key]
    assert record["labels"]["$type"] == "com.atproto.label.defs#selfLabels"
    assert [v["val"] for v in record["labels"]["values"]] == ["!no-unauthenticated", "bot"]
    assert second.labels == ["!no-unauthenticated", "bot"]


def test_setup_bluesky_command_labels_the_account(
    pds: FakePDS, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import adapters.bluesky.client as bluesky_module
    from bot.commands import setup

    transport = httpx.MockTransport(pds.handle)
    monkeypatch.setattr(bluesky_module, "Request", lambda **kw: Request(transport=transport, **kw))
    env = {
        "FACTNOTE_BLUESKY_HANDLE": BOT_HANDLE,
        "FACTNOTE_BLUESKY_APP_PASSWORD": PASSWORD,
        "FACTNOTE_BLUESKY_PDS": PDS,
    }
    args = ["bluesky", "--session-path", str(tmp_path / "bsky.session")]
    runner = CliRunner()

    first = runner.invoke(setup.app, [*args, "--json"], env=env)
    second = runner.invoke(setup.app, args, env=env)

    assert first.exit_code == 0, first.output
    assert json.loads(first.output) == {
        "did": BOT_DID,
        "handle": BOT_HANDLE,
        "changed": True,
        "labels": ["!no-unauthenticated", "bot"],
    }
    assert second.exit_code == 0, second.output
    assert "already labelled" in second.output
    assert len(pds.named("com.atproto.repo.putRecord")) == 1
    # The second run reused the session the first one stored.
    assert len(pds.named("com.atproto.server.createSession")) == 1
    assert pds.profile["value"]["displayName"] == "FactNote (bot)"


def test_setup_bluesky_without_credentials_exits_with_a_message(tmp_path: Path) -> None:
    from bot.commands import setup

    result = CliRunner().invoke(
        setup.app,
        ["bluesky", "--session-path", str(tmp_path / "s")],
        env={"FACTNOTE_BLUESKY_HANDLE": "", "FACTNOTE_BLUESKY_APP_PASSWORD": ""},
    )

    assert result.exit_code == 2
    assert "FACTNOTE_BLUESKY_HANDLE" in result.output
