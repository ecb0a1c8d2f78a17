"""Every exchange the Community Notes adapter has with its fake is held to X's published specs
(`tests/contract`); those tests carry the `contract` marker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.contract.plugin import notes_contract, summary_line

__all__ = ["notes_contract"]


def _notes_test(path: Path) -> bool:
    """A test of the Community Notes adapter: one under tests/adapters/x_notes/."""
    return path.parent.name == "x_notes"


@pytest.fixture(autouse=True)
def _x_notes_contract(request: pytest.FixtureRequest) -> Iterator[None]:
    if not _notes_test(request.node.path):
        yield
        return
    request.getfixturevalue("notes_contract")
    yield


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _notes_test(item.path) or "/adapters/x/" in str(item.path):
            item.add_marker(pytest.mark.contract)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    line = summary_line()
    if line:
        terminalreporter.write_line(line)
