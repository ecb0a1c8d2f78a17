"""Fixtures of the X adapter tests: the mocked X API (every exchange with it held to X's
published OpenAPI specs after the test, `tests/contract`) and the recorded sleeps."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import responses

from tests.adapters.x.helpers import (
    Sleeps,
)
from tests.contract.plugin import enforce, from_requests_mock, off_spec_reason


@pytest.fixture
def api(request: pytest.FixtureRequest) -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=True) as mock:
        yield mock
        # Inside the block: leaving it resets `mock.calls`.
        enforce(from_requests_mock(mock, off_spec_reason(request)))


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()
