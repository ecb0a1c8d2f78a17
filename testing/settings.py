"""Settings for a bot whose files all live in one test folder: its database, its local index
file, and the local platform's inbox and outbox. Kept apart from testing.builders so that a
pipeline test building records does not import the bot's configuration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.config import Settings, load_settings


def local_settings(folder: Path, **overrides: Any) -> Settings:
    """`load_settings` with the bot's files in `folder`; `overrides` as it takes them (a `local`
    section given here is merged over the inbox and outbox)."""
    local = {"inbox": str(folder / "inbox"), "outbox": str(folder / "outbox.jsonl")}
    local.update(overrides.pop("local", {}))
    return load_settings(
        database_url=f"sqlite:///{folder / 'factnote.db'}",
        index_path=str(folder / "index.sqlite"),
        local=local,
        **overrides,
    )
