"""Ways the tests run `factnote` commands: typer's runner with `--json` output, and a few lines
in a fresh interpreter, where `sys.modules` shows what a cold start of a command imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

# What a probe starts with: the root command and typer's runner, nothing else imported yet.
CLI_PRELUDE = "import json, sys\nfrom typer.testing import CliRunner\nfrom bot import cli\n"


def json_rows(app: typer.Typer, *args: str) -> list[dict[str, object]]:
    """The rows a command prints with `--json`, after checking that it succeeded."""
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert isinstance(payload, list)
    return payload


def run_python(
    code: str,
    database: Path,
    *,
    env: Mapping[str, str] | None = None,
    timeout: int = 120,
) -> subprocess.CompletedProcess[str]:
    """`code` run by this interpreter in a child process, with its main database at `database`
    and the environment `env` (this process's own when None)."""
    environment = {**(os.environ if env is None else env)}
    environment["FACTNOTE_DATABASE_URL"] = f"sqlite:///{database}"
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        env=environment,
    )


def probe_cli(
    body: str,
    database: Path,
    *,
    env: Mapping[str, str] | None = None,
    timeout: int = 120,
) -> Any:
    """The JSON value the last line of `body` prints, run after `CLI_PRELUDE` in a fresh
    interpreter; the child's stderr is the failure message when it does not exit 0."""
    done = run_python(CLI_PRELUDE + body, database, env=env, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
