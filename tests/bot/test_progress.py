"""Progress bars for long commands (issue 18 item 10): drawn on a terminal, never with --quiet
or when stderr is a pipe, so that what programs read stays the same."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

from bot import cli, progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def context(quiet: bool = False) -> Any:
    return SimpleNamespace(meta={progress.QUIET_KEY: quiet})


def test_a_bar_on_a_terminal_counts_and_estimates(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    monkeypatch.setenv("COLUMNS", "120")
    with progress.bars(context()) as bars:
        bar = bars.add("indexing", 3)
        bar.advance()
        bar.advance()
        bars._progress.refresh()  # type: ignore[union-attr]
        drawn = screen.getvalue()
    assert "indexing" in drawn
    assert "2/3" in drawn
    assert "eta" in drawn


@pytest.mark.parametrize("quiet", [True, False])
def test_no_bar_with_quiet_or_off_a_terminal(monkeypatch: pytest.MonkeyPatch, quiet: bool) -> None:
    screen = Terminal() if quiet else io.StringIO()  # quiet wins even on a terminal
    monkeypatch.setattr(sys, "stderr", screen)
    with progress.bar(context(quiet), "indexing", 2) as bar:
        bar.advance()
        bar.update(description="still indexing")
        bar.done()
    assert screen.getvalue() == ""


def test_quiet_reaches_the_command_also_when_given_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[bool] = []

    def shown(ctx: Any) -> bool:
        asked.append(progress.is_quiet(ctx))
        return False

    monkeypatch.setattr(progress, "shown", shown)
    env = {"FACTNOTE_DATABASE_URL": f"sqlite:///{tmp_path / 'q.db'}"}
    out = str(tmp_path / "report")
    for args in (["--quiet", "report", "--out", out], ["report", "--out", out, "--quiet"]):
        result = CliRunner().invoke(cli.app, args, env=env)
        assert result.exit_code == 0, result.output
    result = CliRunner().invoke(cli.app, ["report", "--out", out], env=env)
    assert result.exit_code == 0, result.output
    assert asked == [True, True, False]


def test_track_counts_an_item_once_the_loop_is_done_with_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "stderr", Terminal())
    seen: list[float] = []
    with progress.bar(context(), "adding", 3) as bar:
        for item in bar.track(["a", "b", "c"]):
            seen.append(bar._progress.tasks[0].completed)  # type: ignore[union-attr]
            if item == "b":
                continue  # a skipped item is counted all the same
        seen.append(bar._progress.tasks[0].completed)  # type: ignore[union-attr]
    assert seen == [0, 1, 2, 3]
