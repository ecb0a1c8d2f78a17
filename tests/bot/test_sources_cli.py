"""Tests for `factnote sources`: lookup explanations and table export."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from bot.commands.sources import app
from pipeline.config import CredibilityConfig
from pipeline.credibility import PublisherTable

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "credibility"

runner = CliRunner()


@pytest.fixture(autouse=True)
def _no_ambient_config(monkeypatch: pytest.MonkeyPatch) -> None:
    # A developer's FACTNOTE_* environment must not change what these tests see.
    monkeypatch.delenv("FACTNOTE_CONFIG", raising=False)
    monkeypatch.delenv("FACTNOTE_CREDIBILITY__OVERRIDES", raising=False)


def test_lookup_prints_a_table_explaining_each_rating() -> None:
    result = runner.invoke(app, ["lookup", "https://www.bbc.co.uk/news/x", "arxiv.org"])
    assert result.exit_code == 0, result.output
    assert "bbc.co.uk" in result.stdout
    assert "default table" in result.stdout
    assert "rule:preprint" in result.stdout
    assert "not peer-reviewed" in result.stdout


def test_lookup_json_matches_the_table_ratings() -> None:
    queries = ["https://news.bbc.co.uk/x", "science.org/doings", "who.int", "127.0.0.1"]
    result = runner.invoke(app, ["lookup", "--json", *queries])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    table = PublisherTable.default()
    assert [item["query"] for item in payload] == queries
    for item, query in zip(payload, queries, strict=True):
        rating = table.lookup(query)
        assert item == {
            "query": query,
            "domain": rating.domain,
            "tier": rating.tier.value,
            "reason": rating.reason,
            "source": rating.source,
            "matched": rating.matched,
            "reference": rating.reference,
        }


def test_lookup_layers_muse_mbfc_and_score_files() -> None:
    args = ["lookup", "--json", "layerednews.com", "science.org/journal/sciadv/x"]
    muse = ["--muse-dir", str(FIXTURES / "muse")]
    mbfc = ["--mbfc-csv", str(FIXTURES / "mbfc.csv")]
    score = ["--score-csv", str(FIXTURES / "scores.csv")]

    def first(extra: list[str]) -> dict[str, str]:
        result = runner.invoke(app, [*args, *extra])
        assert result.exit_code == 0, result.output
        item: dict[str, str] = json.loads(result.stdout)[0]
        return item

    assert (first(muse)["tier"], first(muse)["source"]) == ("medium", "muse")
    assert first([*muse, *mbfc])["source"] == "mbfc"
    assert (first([*muse, *mbfc, *score])["tier"], first([*mbfc, *score])["source"]) == (
        "low",
        "score",
    )
    path_entry = json.loads(runner.invoke(app, [*args, *muse]).stdout)[1]
    assert path_entry["matched"] == "science.org/journal/sciadv"


def test_lookup_warns_about_skipped_import_lines() -> None:
    result = runner.invoke(app, ["lookup", "--muse-dir", str(FIXTURES / "muse"), "x.org"])
    assert result.exit_code == 0
    assert "warning: skipped" in result.stderr
    assert "'not a domain'" in result.stderr


def test_lookup_uses_the_credibility_section_of_a_config_file(tmp_path: Path) -> None:
    config = tmp_path / "factnote.toml"
    config.write_text('[credibility.overrides]\n"reuters.com" = "low"\n', encoding="utf-8")
    result = runner.invoke(app, ["lookup", "--json", "--config", str(config), "reuters.com"])
    assert result.exit_code == 0, result.output
    item = json.loads(result.stdout)[0]
    assert (item["tier"], item["source"]) == ("low", "override")


def test_lookup_uses_settings_passed_by_the_root_command() -> None:
    settings = SimpleNamespace(credibility=CredibilityConfig(overrides={"apnews.com": "medium"}))
    result = runner.invoke(app, ["lookup", "--json", "apnews.com"], obj=settings)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["source"] == "override"


def test_lookup_with_a_missing_import_folder_fails_clearly(tmp_path: Path) -> None:
    result = runner.invoke(app, ["lookup", "--muse-dir", str(tmp_path / "absent"), "x.org"])
    assert result.exit_code == 2
    assert "no MUSE tier list found" in result.stderr


def test_export_csv_writes_the_effective_table_to_stdout() -> None:
    result = runner.invoke(app, ["export"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    entries = PublisherTable.default().entries()
    assert [row["domain"] for row in rows] == [e.key for e in entries]
    assert rows[0].keys() == {"domain", "tier", "reason", "source", "reference"}
    who = next(row for row in rows if row["domain"] == "who.int")
    assert (who["tier"], who["source"], who["reference"]) == ("high", "default table", "yes")


def test_export_json_to_a_file_includes_imported_layers(tmp_path: Path) -> None:
    out = tmp_path / "table.json"
    result = runner.invoke(
        app,
        ["export", "--format", "json", "--out", str(out), "--score-csv",
         str(FIXTURES / "scores.csv")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    rows = json.loads(out.read_text(encoding="utf-8"))
    assert len(rows) == len(PublisherTable.default().entries()) + 9
    top = next(row for row in rows if row["domain"] == "top.com")
    assert (top["tier"], top["source"], top["reference"]) == ("high", "score", None)


def test_export_refuses_an_unknown_format() -> None:
    result = runner.invoke(app, ["export", "--format", "xml"])
    assert result.exit_code != 0
