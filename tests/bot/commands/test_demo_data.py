"""The demo's data is usable after the demo: every command run with `examples/demo.toml` sees
the claim index, local index and database that `factnote demo` filled."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.commands.demo import demo_paths
from bot.config import load_settings

REPO = Path(__file__).resolve().parents[3]
DEMO_TOML = REPO / "examples/demo.toml"

runner = CliRunner()


@pytest.fixture
def no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the demo's file decides: no FACTNOTE_*/OPENAI_* variable of the machine running
    the tests (an LLM endpoint would change what the check answers)."""
    for name in list(os.environ):
        if name.startswith(("FACTNOTE_", "OPENAI_")):
            monkeypatch.delenv(name)


def test_the_demo_config_names_the_paths_the_demo_writes(no_env: None) -> None:
    settings = load_settings(DEMO_TOML)
    named = {
        "database_url": settings.database_url,
        "index_path": settings.index_path,
        "claims.path": settings.claims.path,
        "authority.path": settings.authority.path,
        "local.outbox": settings.local.outbox,
    }
    assert named == demo_paths()


def test_claims_match_and_check_see_the_demo_data_afterwards(
    no_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    # Another config in force (as the Docker image's is): the demo runs on its own all the same.
    other = tmp_path / "other.toml"
    other.write_text('database_url = "sqlite:///elsewhere.db"\n', encoding="utf-8")
    monkeypatch.setenv("FACTNOTE_CONFIG", str(other))
    demo = runner.invoke(app, ["demo", "--examples", str(REPO / "examples")])
    assert demo.exit_code == 0, demo.output
    assert "claims match" in demo.stdout  # it says how to use its data afterwards
    assert (tmp_path / "data/demo/factnote.db").is_file()
    assert not (tmp_path / "elsewhere.db").exists()
    # Its fictional posts are answered (its config lifts the age limit on them).
    assert "factcheck-desk.example/checks/northvale-5g-birds" in demo.stdout

    config = ["--config", str(DEMO_TOML)]  # wins over FACTNOTE_CONFIG

    match = runner.invoke(
        app, [*config, "claims", "match", "5G masts are killing birds in Northvale", "--json"]
    )
    assert match.exit_code == 0, match.output
    urls = [m["record"]["review_url"] for m in json.loads(match.stdout)]
    assert "https://factcheck-desk.example/checks/northvale-5g-birds" in urls

    # 1004 is "@factnote settle this" under the 5G post: the post asked about is checked,
    # and without an LLM only the demo's claim index can answer it.
    check = runner.invoke(
        app, [*config, "check", "--post-json", str(REPO / "examples/inbox/1004.json"), "--json"]
    )
    assert check.exit_code == 0, check.output
    decision = json.loads(check.stdout)
    assert decision["status"] == "reply"
    assert "https://factcheck-desk.example/checks/northvale-5g-birds" in decision["urls"]

    # A post no fact-check covers: retrieval reads the demo's local index.
    bridge = runner.invoke(
        app, [*config, "check", "Riverton Old Bridge is shutting for all of 2027", "--json"]
    )
    candidates = json.loads(bridge.stdout)["candidates"]
    assert any("transport-authority.example/" in c["url"] for c in candidates), bridge.stdout
