"""Fixtures of the Bluesky adapter tests: the fake PDS, the credentials and adapters on them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from adapters.bluesky.adapter import BlueskyAdapter
from adapters.bluesky.client import BlueskyCredentials
from tests.adapters.bluesky.helpers import (
    BOT_HANDLE,
    PASSWORD,
    PDS,
    FakePDS,
)


@pytest.fixture
def pds() -> FakePDS:
    return FakePDS()


@pytest.fixture
def creds() -> BlueskyCredentials:
    return BlueskyCredentials(handle=BOT_HANDLE, app_password=PASSWORD, pds=PDS)


@pytest.fixture
def make_adapter(
    pds: FakePDS, creds: BlueskyCredentials, tmp_path: Path
) -> Callable[..., BlueskyAdapter]:
    def build(**kwargs: Any) -> BlueskyAdapter:
        kwargs.setdefault("session_path", tmp_path / "state" / "bluesky.session")
        return BlueskyAdapter(creds, client=pds.client(), **kwargs)

    return build


@pytest.fixture
def adapter(make_adapter: Callable[..., BlueskyAdapter]) -> BlueskyAdapter:
    return make_adapter()
