"""Fixtures of the X adapter tests: the mocked X API and the recorded sleeps."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import responses

from tests.adapters.x.helpers import (
    Sleeps,
)


@pytest.fixture
def api() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=True) as mock:
        yield mock


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()
