"""Every exchange the Community Notes adapter has with its fake is held to X's published specs
(`tests/contract`); those tests carry the `contract` marker."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.contract.plugin import notes_contract, summary_line

__all__ = ["notes_contract"]


@pytest.fixture(autouse=True)
def _x_notes_contract(request: pytest.FixtureRequest) -> Iterator[None]:
    if "x_notes" not in request.node.path.name:
        yield
        return
    request.getfixturevalue("notes_contract")
    yield


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "x_notes" in item.path.name or "/adapters/x/" in str(item.path):
            item.add_marker(pytest.mark.contract)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    line = summary_line()
    if line:
        terminalreporter.write_line(line)
