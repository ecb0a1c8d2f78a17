"""The bot as child processes: the command that starts it, the environment it gets (the fake
LLM, this checkout on PYTHONPATH), an inbox of many summonses and the LLM answers for them,
shared by the process tests and the PostgreSQL crash test."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from testing.builders import inbox_summons, write_inbox
from testing.fakes.openai_server import FakeLLM, Reply
from testing.scenarios import cite_first_two, quotes_from_page

REPO = Path(__file__).resolve().parents[2]
FACTNOTE = [sys.executable, "-m", "bot.cli"]
TERMINAL = {"posted", "dry_run", "abstained", "skipped", "failed", "needs_llm", "rejected"}


def env_for(fake: FakeLLM | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FACTNOTE_", "OPENAI_"))}
    env["PYTHONPATH"] = str(REPO)
    env["HF_HUB_OFFLINE"] = "1"
    if fake is not None:
        env["FACTNOTE_LLM_BASE_URL"] = fake.base_url
        env["FACTNOTE_LLM_MODEL"] = "fake-model"
    return env


def make_inbox(tmp: Path, count: int) -> list[str]:
    """`count` summonses in `tmp`/inbox, every tenth about an opinion (not checkable)."""
    items = [
        inbox_summons(
            f"{1000 + i}",
            author=f"asker_{i}_demo",
            parent_text=(
                "In my opinion lemon tea is nicer than coffee, number " + str(i)
                if i % 10 == 0
                else f"Drinking hot lemon water every hour kills the flu virus, claim {i}."
            ),
        )
        for i in range(count)
    ]
    write_inbox(tmp / "inbox", items)
    return [item["id"] for item in items]


def script(fake: FakeLLM) -> None:
    def analysis(body: dict[str, Any]) -> Reply:
        opinion = any("In my opinion" in str(m["content"]) for m in body["messages"])
        return Reply.json(
            {
                "checkable": not opinion,
                "reason": "an opinion" if opinion else "",
                "claims": [] if opinion else ["Hot lemon water kills the flu virus"],
                "questions": [],
                "queries": [] if opinion else ["lemon water kills flu virus"],
            }
        )

    fake.script("analyze", analysis)
    fake.script("evidence", quotes_from_page)
    fake.script("write", cite_first_two)
