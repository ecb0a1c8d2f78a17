"""The contract hooks, as fixtures the X adapter tests use: every exchange with a fake X is
validated against X's published OpenAPI specs after the test (`tests/contract/spec.py`).

A test that serves an answer outside the spec on purpose (a malformed page the adapter must
survive, X's v1.1-style error list) says so with `@pytest.mark.off_spec("why")`: its requests
are still validated, its answers are not.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pytest
import responses

from testing.fakes.x_notes_api import FakeNotesApi, observed
from tests.contract.spec import TALLY, Exchange, SpecsMissing, check, exchange


def off_spec_reason(request: pytest.FixtureRequest) -> str | None:
    marker = request.node.get_closest_marker("off_spec")
    return str(marker.args[0]) if marker is not None else None


def from_requests_mock(mock: responses.RequestsMock, off_spec: str | None) -> list[Exchange]:
    """The calls `responses` answered (those it refused or raised on never reached X)."""
    return [
        Exchange(call.request, call.response, off_spec)
        for call in mock.calls
        if call.response is not None and hasattr(call.response, "status_code")
    ]


def from_fakes(fakes: Iterable[FakeNotesApi], off_spec: str | None) -> list[Exchange]:
    return [
        exchange(
            r.method,
            f"http://127.0.0.1{r.target}",
            body=r.body,
            headers=r.headers,
            status=r.status,
            response_body=r.response_body,
            response_headers=r.response_headers,
            off_spec=off_spec,
        )
        for fake in fakes
        for r in fake.exchanges
    ]


def enforce(exchanges: list[Exchange]) -> None:
    if not exchanges:
        return
    try:
        failures = check(exchanges)
    except SpecsMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    if failures:
        pytest.fail(
            f"{len(failures)} of {len(exchanges)} exchanges break X's OpenAPI specs:\n"
            + "\n".join(failures),
            pytrace=False,
        )


@pytest.fixture
def notes_contract(request: pytest.FixtureRequest) -> Iterator[list[FakeNotesApi]]:
    """Validates every exchange of every `FakeNotesApi` the test starts."""
    with observed() as fakes:
        yield fakes
    enforce(from_fakes(fakes, off_spec_reason(request)))


def summary_line() -> str | None:
    """The session's contract figures, for the terminal summary."""
    tally = TALLY
    if not tally.requests:
        return None
    return (
        f"X contract: {tally.requests} requests and {tally.responses} answers validated against "
        f"X's OpenAPI specs 2.159/2.167 ({tally.off_spec} answers off-spec on purpose)"
    )
