"""`bot.config_check`: a misspelt key, section or environment variable is named with its file,
line and closest known name, never silently ignored; `factnote config check` says where each
setting in force came from, secrets masked. Run through the CLI, as an operator would."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.config import ConfigError, load_settings

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[pytest.MonkeyPatch]:
    """No FACTNOTE_*/OPENAI_* variable of the machine running the tests, in an empty folder."""
    for name in list(os.environ):
        if name.upper().startswith(("FACTNOTE_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    yield monkeypatch


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), terminal_width=200)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('mdoe = "review"\n', "factnote.toml:1: unknown setting `mdoe`; did you mean `mode`?"),
        (
            '[llm]\nmodel = "m"\n\n[serch]\nproviders = ["local"]\n',
            "factnote.toml:4: unknown section [serch]; did you mean [search]?",
        ),
        (
            '[local]\ninbx = "posts"\n',
            "factnote.toml:2: unknown setting `local.inbx`; did you mean `inbox`?",
        ),
        (
            '[x]\nenabled = false\nmdoe = "live"\n',
            "factnote.toml:3: unknown setting `x.mdoe`; did you mean `mode`?",
        ),
        (
            'local.inbx = "posts"\n',
            "factnote.toml:1: unknown setting `local.inbx`; did you mean `inbox`?",
        ),
        (
            "[research.tier_wieghts]\nhigh = 1.0\n",
            "factnote.toml:1: unknown section [research.tier_wieghts]; "
            "did you mean [research.tier_weights]?",
        ),
    ],
)
def test_a_misspelt_key_or_section_is_refused_with_its_line_and_the_closest_name(
    env: pytest.MonkeyPatch, tmp_path: Path, text: str, line: str
) -> None:
    (tmp_path / "factnote.toml").write_text(text, encoding="utf-8")
    code, _, err = run("--config", "factnote.toml", "status")
    assert code == 2
    assert err == f"factnote: error: {line}\n"


def test_every_unknown_key_is_one_line_and_a_name_like_no_setting_points_to_the_reference(
    env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "factnote.toml").write_text('mdoe = "review"\nzzzqqq = 1\n', encoding="utf-8")
    code, _, err = run("--config", "factnote.toml", "status")
    assert code == 2
    assert err.splitlines() == [
        "factnote: error: factnote.toml:1: unknown setting `mdoe`; did you mean `mode`?",
        "factnote: error: factnote.toml:2: unknown setting `zzzqqq`; "
        "see examples/factnote.toml for every setting",
    ]


def test_free_form_tables_and_arrays_of_tables_accept_their_own_keys(
    env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "factnote.toml"
    config.write_text(
        '[credibility.overrides]\n"anything.example" = "high"\n'
        '[[authority.accounts]]\nhandle = "who"\ntopcis = ["health"]\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=r":5: unknown setting `authority.accounts.topcis`; "):
        load_settings(config)
    config.write_text('[credibility.overrides]\n"anything.example" = "high"\n', encoding="utf-8")
    assert load_settings(config).credibility.overrides == {"anything.example": "high"}


def test_a_misspelt_mode_value_suggests_the_closest_mode(
    env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "factnote.toml").write_text('[x]\nmode = "reveiw"\n', encoding="utf-8")
    code, _, err = run("--config", "factnote.toml", "status")
    assert code == 2
    assert err == (
        "factnote: error: setting x.mode (env FACTNOTE_X__MODE): Input should be 'dry-run', "
        "'review' or 'live' (got 'reveiw'); did you mean 'review'?; set it in the config file "
        "(--config) or the environment\n"
    )


def test_a_toml_syntax_error_is_one_line_with_the_file_and_line(
    env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "factnote.toml").write_text('mode = "review"\n[local]\ninbox =\n', encoding="utf-8")
    code, _, err = run("--config", "factnote.toml", "status")
    assert code == 2
    assert err == "factnote: error: factnote.toml:3: invalid TOML: Invalid value (column 8)\n"


def test_an_unknown_factnote_variable_is_a_warning_naming_the_closest(
    env: pytest.MonkeyPatch,
) -> None:
    env.setenv("FACTNOTE_MDOE", "review")
    env.setenv("FACTNOTE_LOCAL__INBX", "posts")
    env.setenv("FACTNOTE_CREDIBILITY__OVERRIDES__SOME_DOMAIN", "high")  # a free-form table's key
    env.setenv("FACTNOTE_LOG_LEVEL", "warning")  # read by the CLI, not the settings
    code, _, err = run("config", "check", "--changed")
    assert code == 0
    assert err.splitlines() == [
        "factnote: warning: unknown environment variable FACTNOTE_LOCAL__INBX is ignored; "
        "did you mean FACTNOTE_LOCAL__INBOX?",
        "factnote: warning: unknown environment variable FACTNOTE_MDOE is ignored; "
        "did you mean FACTNOTE_MODE?",
    ]


def test_config_check_names_each_settings_source_and_masks_secrets(
    env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "factnote.toml").write_text(
        'mode = "review"\ndatabase_url = "postgresql+psycopg://bot:pw-never-shown@db/factnote"\n'
        '\n[local]\ninbox = "posts"\n',
        encoding="utf-8",
    )
    env.setenv("OPENAI_API_KEY", "sk-never-shown")
    env.setenv("FACTNOTE_RUNTIME__WORKERS", "3")
    code, out, err = run("--config", "factnote.toml", "config", "check")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert 'mode = "review"  # file factnote.toml:1' in lines
    assert (
        'database_url = "postgresql+psycopg://bot:***@db/factnote"  # file factnote.toml:2' in lines
    )
    assert 'local.inbox = "posts"  # file factnote.toml:5' in lines
    assert "llm.api_key = (secret, set)  # environment OPENAI_API_KEY" in lines
    assert "runtime.workers = 3  # environment FACTNOTE_RUNTIME__WORKERS" in lines
    assert "llm.model = (unset)  # default" in lines
    assert "x.mode = (unset)  # default" in lines
    assert "never-shown" not in out
    code, changed, _ = run("--config", "factnote.toml", "config", "check", "--changed")
    assert len(changed.splitlines()) == 5


@pytest.mark.parametrize("name", ["factnote.toml", "demo.toml", "docker.toml"])
def test_the_shipped_config_files_have_no_unknown_key(env: pytest.MonkeyPatch, name: str) -> None:
    load_settings(REPO / "examples" / name)


@pytest.mark.parametrize(
    ("local", "folder"),
    [
        ("", "examples/inbox"),
        ('[local]\ninbox = "posts"\n', "posts"),
        ('[local]\ninbox = "posts/inbox.jsonl"\n', "posts"),
        ('[local]\ninbox = "posts"\n[images]\nlocal_dir = "pictures"\n', "pictures"),
    ],
)
def test_local_images_follow_the_local_inbox_unless_set(
    env: pytest.MonkeyPatch, tmp_path: Path, local: str, folder: str
) -> None:
    (tmp_path / "factnote.toml").write_text(local, encoding="utf-8")
    assert load_settings("factnote.toml").images.local_dir == folder
