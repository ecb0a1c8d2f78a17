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
from pipeline.sources.credibility import PublisherTable

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "credibility"

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


# -- coverage ---------------------------------------------------------------------------------

CITED = FIXTURES / "cited_urls.txt"


def test_coverage_json_counts_the_fixture_links_by_tier() -> None:
    result = runner.invoke(app, ["coverage", "--json", str(CITED)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    # 11 lines, one of them a note's text with two links in it.
    assert (report["citations"], report["rated"], report["rated_share"]) == (12, 9, 0.75)
    counts = {tier: item["count"] for tier, item in report["by_tier"].items()}
    assert counts == {"high": 4, "medium": 3, "low": 1, "excluded": 1, "unknown": 3}
    assert report["by_source"]["rule:government"] == 1
    assert {item["domain"] for item in report["top_unrated"]} == {
        "bit.ly",
        "imdb.com",
        "some-unlisted-shop-4417.com",
    }
    assert report["resolution"] is None


def test_coverage_table_output_shows_share_and_unrated_reasons() -> None:
    result = runner.invoke(app, ["coverage", str(CITED)])
    assert result.exit_code == 0, result.output
    assert "12 cited links, 9 rated (75.0%)" in result.stdout
    assert "rule:user-generated" in result.stdout
    assert "publisher not in the table" in result.stdout


def test_coverage_reads_links_from_a_csv_column() -> None:
    result = runner.invoke(app, ["coverage", "--json", str(FIXTURES / "cited_notes.csv")])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["citations"], report["rated"]) == (3, 2)
    assert report["by_source"]["rule:user-generated"] == 1


def test_coverage_refuses_a_csv_without_a_link_column(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1,2\n", encoding="utf-8")
    result = runner.invoke(app, ["coverage", str(path)])
    assert result.exit_code == 2
    assert "no link column found" in result.stderr


def test_coverage_resolve_rates_targets_and_counts_failures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.commands import sources
    from pipeline.config import FetchConfig
    from pipeline.web.resolve import LinkResolver
    from testing.fakes.http_server import LocalHTTPServer, Route

    with LocalHTTPServer() as server:
        # A shortener's 301 to a publisher, and a dead short link.
        server.redirect("/s", "https://www.nature.com/articles/x", status=301)
        server.add("/dead", Route(status=404))
        monkeypatch.setattr(
            sources,
            "make_resolver",
            lambda cfg, fetch: LinkResolver(
                cfg,
                FetchConfig(allow_hosts=["127.0.0.1"]),
                is_redirector=lambda h: h == "127.0.0.1",
            ),
        )
        path = tmp_path / "links.txt"
        path.write_text(f"{server.url('/s')}\n{server.url('/dead')}\n", encoding="utf-8")
        offline = json.loads(runner.invoke(app, ["coverage", "--json", str(path)]).stdout)
        assert server.requests == []  # off by default: no network
        result = runner.invoke(app, ["coverage", "--json", "--resolve", str(path)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert offline["rated"] == 0
    assert report["rated"] == 1 and report["by_tier"]["high"]["count"] == 1
    assert report["resolution"] == {"resolved": 1, "unresolved": {"http 404": 1}}
