"""The root command: lists every sub-command without importing it, runs the one asked for."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.core import TyperGroup
from typer.testing import CliRunner

from bot import cli


@pytest.mark.parametrize("name", sorted(cli.COMMANDS))
def test_listed_help_line_is_the_commands_own(name: str) -> None:
    command = cli.load_command(name)
    own = inspect.cleandoc(command.help or "").split("\n\n")[0].replace("\n", " ")
    assert cli.COMMANDS[name].help == own


def test_loaded_groups_keep_their_subcommands() -> None:
    group = cli.load_command("sources")
    assert isinstance(group, TyperGroup)
    assert {"lookup", "export"} <= set(group.commands)


def test_root_help_lists_every_command() -> None:
    result = CliRunner().invoke(cli.app, ["--help"], terminal_width=200)
    assert result.exit_code == 0
    for name in cli.COMMANDS:
        assert f" {name} " in result.output


def test_unknown_command_is_refused_by_name() -> None:
    result = CliRunner().invoke(cli.app, ["nosuch"])
    assert result.exit_code == 2
    assert "nosuch" in result.output


def test_help_guard_and_status_import_neither_the_runtime_nor_the_platform_sdks(
    tmp_path: Path,
) -> None:
    # In a fresh interpreter: what a cold `factnote --help` / `guard` / `status` loads.
    probe = (
        "import sys, json\n"
        "from typer.testing import CliRunner\n"
        "from bot import cli\n"
        "out = {}\n"
        "for args in (['--help'], ['guard', 'Flu shots are safe.'], ['status']):\n"
        "    r = CliRunner().invoke(cli.app, args)\n"
        "    out[args[0]] = [r.exit_code, sorted(m for m in ('bot.runtime', 'torch', "
        "'atproto', 'tweepy', 'openai', 'fastapi') if m in sys.modules)]\n"
        "print(json.dumps(out))\n"
    )
    env = {**os.environ, "FACTNOTE_DATABASE_URL": f"sqlite:///{tmp_path / 'status.db'}"}
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env=env,
    )
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"--help": [0, []], "guard": [0, []], "status": [0, []]}
