"""The command line is the same everywhere (issue 32): global options before or after any
sub-command and listed in every help, one `factnote: error:` line for every user mistake (no
usage blocks, no boxes, no pydantic dumps), and URLs printed whole at any terminal width. Run
through the root command with typer's runner, as a user types it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from bot import cli

INDEXED = Path(__file__).resolve().parents[1] / "fixtures" / "index" / "pages" / "orphan.txt"
LONG_URL = "https://hygiene.example/2026/11/29/a-very-long-path/handwashing-with-soap?page=2"


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """No FACTNOTE_*/OPENAI_* variable of the machine running the tests; a fresh database."""
    for name in list(os.environ):
        if name.upper().startswith(("FACTNOTE_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FACTNOTE_DATABASE_URL", f"sqlite:///{tmp_path / 'factnote.db'}")
    yield tmp_path


def run(*args: str, columns: int = 200) -> Result:
    return CliRunner(env={"COLUMNS": str(columns)}).invoke(cli.app, list(args))


@pytest.mark.parametrize(
    "args",
    [
        ["status", "-v", "-q", "--json"],
        ["-v", "status", "-q", "--json"],
        ["status", "--json", "--log-level", "error", "--verbose", "--quiet"],
        ["review", "list", "-q", "-v"],
    ],
)
def test_global_short_and_long_options_are_read_before_or_after_the_subcommand(
    env: Path, args: list[str]
) -> None:
    result = run(*args)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    "args", [[name] for name in sorted(cli.COMMANDS)] + [["review", "list"], ["config", "check"]]
)
def test_every_help_lists_the_global_options(args: list[str]) -> None:
    result = run(*args, "--help")
    assert result.exit_code == 0, result.output
    assert "Global options (before or after the command)" in result.stdout
    for option in ("--config", "--verbose", "-v", "--quiet", "-q", "--log-level", "--debug"):
        assert f" {option} " in result.stdout, option


def test_an_unknown_option_is_one_prefixed_line_saying_where_help_is(env: Path) -> None:
    result = run("run", "--once", "--nosuch")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == "factnote: error: No such option: --nosuch (see: factnote run --help)\n"


def test_a_missing_argument_is_one_prefixed_line(env: Path) -> None:
    result = run("users", "add")
    assert result.exit_code == 2
    assert result.stderr == (
        "factnote: error: Missing argument 'username'. (see: factnote users add --help)\n"
    )


def test_a_post_file_missing_fields_names_them_in_one_line(env: Path) -> None:
    (env / "post.json").write_text('{"text": "Lemon water cures flu", "id": 3}', encoding="utf-8")
    result = run("check", "--post-json", "post.json")
    assert result.exit_code == 2
    assert result.stderr == (
        "factnote: error: post.json: not a valid post: missing field(s) author, created_at; "
        "id: Input should be a valid string\n"
    )
    missing = run("check", "--post-json", "nothere.json")
    assert (missing.exit_code, missing.stderr) == (
        2,
        "factnote: error: nothere.json: no such file\n",
    )


def test_adding_a_file_that_is_not_there_says_no_such_file(env: Path) -> None:
    result = run("index", "add", "missing.html")
    assert result.exit_code == 1
    assert result.stderr == "factnote: error: failed: missing.html: no such file\n"


def test_a_review_command_for_an_unknown_account_uses_the_same_prefix(env: Path) -> None:
    result = run("review", "claim", "1", "--as", "ghost_demo")
    assert result.exit_code == 1
    assert result.stderr.startswith("factnote: error: no user 'ghost_demo': ")
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize("columns", [40, 200])
def test_search_results_print_each_url_whole_on_its_own_line(env: Path, columns: int) -> None:
    index = str(env / "ix.sqlite")
    added = run("index", "add", str(INDEXED), "--url", LONG_URL, "--index", index)
    assert added.exit_code == 0, added.output
    result = run("index", "search", "soap handwashing", "--index", index, columns=columns)
    assert result.exit_code == 0, result.output
    assert f"[1] {LONG_URL}" in result.stdout.splitlines()
    assert "…" not in result.stdout.split("[1] ")[1]
