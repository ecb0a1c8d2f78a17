"""The runtime's fixture: a fresh harness with the fake LLM scripted for the happy path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.fakes.openai_server import FakeLLM
from testing.scenarios import script_happy_path
from tests.bot.runtime.harness import Env


@pytest.fixture
def env(tmp_path: Path, fake_llm: FakeLLM) -> Iterator[Env]:
    script_happy_path(fake_llm)
    yield Env(tmp_path, fake_llm)
