"""The root command: lists every sub-command without importing it, runs the one asked for."""

from __future__ import annotations

import inspect
import os
from importlib import metadata
from pathlib import Path
from typing import Any, get_args

import pytest
from typer.core import TyperGroup
from typer.testing import CliRunner

from bot import cli
from bot.errors import user_error
from tests.bot.cli_runs import probe_cli, run_python


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


@pytest.mark.process  # a child interpreter: left out of `make test-fast`
def test_help_guard_and_status_import_neither_the_runtime_nor_the_platform_sdks(
    tmp_path: Path,
) -> None:
    # In a fresh interpreter: what a cold `factnote --help` / `guard` / `status` loads.
    probe = (
        "out = {}\n"
        "for args in (['--help'], ['guard', 'Flu shots are safe: who.int/f', '-e', "
        "'https://who.int/f'], ['status']):\n"
        "    r = CliRunner().invoke(cli.app, args)\n"
        "    out[args[0]] = [r.exit_code, sorted(m for m in ('bot.ops.runtime', 'torch', "
        "'atproto', 'tweepy', 'openai', 'fastapi') if m in sys.modules)]\n"
        "print(json.dumps(out))\n"
    )
    seen = probe_cli(probe, tmp_path / "status.db")
    assert seen == {"--help": [0, []], "guard": [0, []], "status": [0, []]}


# --- conventions (issue 18 item 11) -------------------------------------------------------------


def invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    # Wide enough that rich's help panels do not fold an option's line.
    return CliRunner().invoke(cli.app, list(args), env={"COLUMNS": "200", **(env or {})})


def test_version_prints_the_installed_version() -> None:
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.output.strip() == f"factnote {metadata.version('factnote')}"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["status", "--config", "f.toml"], ["--config", "f.toml", "status"]),
        (["status", "--config=f.toml", "--json"], ["--config=f.toml", "status", "--json"]),
        (
            ["--quiet", "index", "add", "a.html", "--log-level", "info", "--debug"],
            ["--quiet", "--log-level", "info", "--debug", "index", "add", "a.html"],
        ),
        (["--config", "f.toml", "run", "--once"], ["--config", "f.toml", "run", "--once"]),
        # After `--` everything is an argument, even a word that looks like an option.
        (["check", "--", "--config"], ["check", "--", "--config"]),
        (["status", "--config"], ["status", "--config"]),  # no value: the parser says so
    ],
)
def test_global_options_after_the_subcommand_are_read_as_global(
    args: list[str], expected: list[str]
) -> None:
    assert cli.hoist_global_options(args) == expected


def test_config_after_the_subcommand_is_used(tmp_path: Path) -> None:
    config = tmp_path / "f.toml"
    config.write_text(f'database_url = "sqlite:///{tmp_path / "after.db"}"\n', encoding="utf-8")
    result = invoke("status", "--json", "--config", str(config))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "after.db").exists()


def test_help_keeps_words_in_brackets() -> None:
    # "its [credibility] section" was printed as "its  section": rich read it as markup.
    result = invoke("sources", "lookup", "--help")
    assert result.exit_code == 0
    assert "its [credibility] section is used" in result.output


@pytest.mark.parametrize(
    ("command", "flag"),
    [(["run"], "--once"), (["users", "add"], "--password-stdin"), (["status"], "--json")],
)
def test_boolean_flags_are_shown_without_a_value(command: list[str], flag: str) -> None:
    result = invoke(*command, "--help")
    [line] = [line for line in result.output.splitlines() if f" {flag} " in line]
    assert "<bool>" not in line
    assert "<bool>" not in invoke("--help").output


@pytest.mark.parametrize(
    ("command", "option", "choices"),
    [
        (["run"], "--mode", "<dry-run|review|live>"),
        (["export"], "--format", "<jsonl|csv>"),
        (["users", "add"], "--role", "<admin|senior|moderator>"),
        ([], "--log-format", "<text|json>"),
        ([], "--log-level", "<debug|info|warning|error>"),
    ],
)
def test_options_with_fixed_values_show_and_enforce_their_choices(
    command: list[str], option: str, choices: str
) -> None:
    assert choices in invoke(*command, "--help").output
    refused = invoke(*command, option, "nonsense", *(["status"] if not command else []))
    assert refused.exit_code == 2
    assert "nonsense" in refused.output


def test_the_role_choices_are_the_roles_the_accounts_know() -> None:
    from bot.commands.users import RoleName
    from bot.moderation import users

    assert get_args(RoleName) == users.ROLES


# --- user mistakes: one line, no traceback (issue 18 item 8) -----------------------------------


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: "" for k in os.environ if k.startswith(("FACTNOTE_", "OPENAI_"))}
    env["FACTNOTE_DATABASE_URL"] = f"sqlite:///{tmp_path / 'f.db'}"
    return {**env, **extra}


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        (
            "FACTNOTE_MODE",
            "liev",
            "setting mode (env FACTNOTE_MODE): Input should be 'dry-run', 'review' or 'live' "
            "(got 'liev')",
        ),
        (
            "FACTNOTE_RUNTIME__WORKERS",
            "many",
            "setting runtime.workers (env FACTNOTE_RUNTIME__WORKERS): Input should be a valid "
            "integer",
        ),
        (
            "FACTNOTE_DATABASE_URL",
            "not a url",
            "setting database_url (env FACTNOTE_DATABASE_URL) is not a usable database URL",
        ),
        (
            "FACTNOTE_DATABASE_URL",
            "nosuchdb://x/y",
            "setting database_url (env FACTNOTE_DATABASE_URL) is not a usable database URL",
        ),
        (
            # Issue 32: a 55-line traceback (no MySQL driver); the password is never echoed.
            "FACTNOTE_DATABASE_URL",
            "mysql://bot:pw-never-shown@db/factnote",
            "setting database_url (env FACTNOTE_DATABASE_URL) is not a usable database URL: "
            "mysql is not supported (SQLite and PostgreSQL are); use e.g. "
            "sqlite:///data/factnote.db or postgresql+psycopg://user@host/dbname",
        ),
        (
            "FACTNOTE_DATABASE_URL",
            "postgresql+asyncpg://bot@db/factnote",
            "setting database_url (env FACTNOTE_DATABASE_URL) is not a usable database URL: "
            "the asyncpg driver is not supported (psycopg is)",
        ),
        (
            # Port 1 on the loopback: nothing listens, the connection is refused at once.
            "FACTNOTE_DATABASE_URL",
            "postgresql+psycopg://bot:pw@127.0.0.1:1/factnote",
            "cannot open the database (setting database_url, env FACTNOTE_DATABASE_URL)",
        ),
    ],
)
def test_a_setting_mistake_is_one_line_naming_the_setting_and_the_variable(
    tmp_path: Path, variable: str, value: str, expected: str
) -> None:
    result = invoke("status", env=clean_env(tmp_path, **{variable: value}))
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("factnote: error: " + expected)
    assert "Traceback" not in result.output
    assert "pw-never-shown" not in result.output
    # With --debug the error is raised as it is, with its traceback.
    debug = invoke("--debug", "status", env=clean_env(tmp_path, **{variable: value}))
    assert debug.exit_code != 0
    assert not isinstance(debug.exception, SystemExit)


def test_a_config_file_mistake_names_the_setting(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('[runtime]\nworkers = "many"\n', encoding="utf-8")
    result = invoke("--config", str(config), "status", env=clean_env(tmp_path))
    assert result.exit_code == 2
    assert "setting runtime.workers (env FACTNOTE_RUNTIME__WORKERS)" in result.stderr
    missing = invoke("--config", str(tmp_path / "absent.toml"), "status", env=clean_env(tmp_path))
    assert missing.exit_code == 2
    assert missing.stderr.startswith("factnote: error: config file not found")


def test_a_secret_value_is_never_echoed_in_a_setting_error() -> None:
    from pydantic import BaseModel, SecretStr, ValidationError

    from bot.errors import validation_lines

    class WebConfig(BaseModel):
        metrics_token: SecretStr
        workers: int

    with pytest.raises(ValidationError) as caught:
        WebConfig.model_validate({"metrics_token": 12345678, "workers": "x"})
    lines = validation_lines(caught.value)
    assert "12345678" not in " ".join(lines)
    assert any("(got 'x')" in line for line in lines)


@pytest.mark.parametrize(
    ("setting", "starts", "names"),
    [
        pytest.param(
            {"FACTNOTE_X__ENABLED": "true"},
            "factnote: error: ",
            "FACTNOTE_X_BEARER_TOKEN",
            id="platform-without-credentials",
        ),
        pytest.param(
            {"FACTNOTE_SEARCH__PROVIDERS": '["serper"]'},
            "factnote: error: search: serper: FACTNOTE_SEARCH__SERPER_API_KEY",
            "FACTNOTE_SEARCH__PROVIDERS",
            id="search-provider-without-its-key",
        ),
    ],
)
def test_an_enabled_part_without_its_secret_is_one_line_naming_the_variable(
    tmp_path: Path, setting: dict[str, str], starts: str, names: str
) -> None:
    result = invoke("run", "--once", env=clean_env(tmp_path, **setting))
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith(starts)
    assert names in line


def test_a_bug_is_not_dressed_up_as_a_user_mistake() -> None:
    assert user_error(RuntimeError("boom")) is None
    assert user_error(KeyError("x")) is None


@pytest.mark.process  # a child interpreter: left out of `make test-fast`
def test_the_interpreters_last_collection_is_spared_once_factnote_ends(tmp_path: Path) -> None:
    # A handler registered before main() runs after main()'s own at exit: it sees the objects
    # frozen, and the command's output is there all the same.
    probe = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))\n"
        "from bot import cli\n"
        "sys.argv = ['factnote', 'guard', '--platform', 'x', 'Flu shots are safe: who.int/f', "
        "'-e', 'https://who.int/f']\n"
        "cli.main()\n"
    )
    done = run_python(probe, tmp_path / "exit.db")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("valid (x): ")  # the command's own output, written first
    assert lines[-1] == "frozen True"
