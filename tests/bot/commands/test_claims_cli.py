"""`factnote claims import | match` via typer's runner, on fixture files, a local HTTP server
and a real claim index."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from typer.testing import CliRunner

from bot.commands.claims import app
from pipeline.config import ClaimsConfig, FetchConfig
from testing.fakes.http_server import LocalHTTPServer, Route
from tests.bot.cli_runs import json_rows

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "claims"

runner = CliRunner()


def match_json(index: Path, text: str, *extra: str) -> list[dict[str, object]]:
    return json_rows(app, "match", text, "--index", str(index), *extra)


def test_import_files_then_match_a_paraphrase(tmp_path: Path) -> None:
    index = tmp_path / "claims.sqlite"
    result = runner.invoke(
        app,
        [
            "import",
            str(FIXTURES / "factcheck_api.json"),
            str(FIXTURES / "graph_numeric.html"),
            "--index",
            str(index),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "factcheck_api.json: 3 review(s), 3 new or changed, 1 unrated" in result.stdout
    assert "graph_numeric.html: 2 review(s), 2 new or changed, 1 unrated" in result.stdout
    assert "claim index holds 5 review(s)" in result.stdout

    found = match_json(index, "If you eat carrots you can see in the complete dark.")
    # Two publishers reviewed the claim: two matches.
    assert {m["record"]["review_url"] for m in found} == {
        "https://checkers.example/fact-check/carrots-night-vision",
        "https://verificadores.example/es/zanahorias",
    }
    assert all(m["strength"] == "strong" and m["record"]["rating"] == "false" for m in found)

    again = runner.invoke(
        app, ["import", str(FIXTURES / "factcheck_api.json"), "--index", str(index)]
    )
    assert "3 review(s), 0 new or changed" in again.stdout


def test_match_prints_a_table_and_flags_old_reviews(tmp_path: Path) -> None:
    index = tmp_path / "claims.sqlite"
    runner.invoke(app, ["import", str(FIXTURES / "graph_numeric.html"), "--index", str(index)])
    result = runner.invoke(
        app,
        ["match", "You can see the Great Wall of China from the Moon.", "--index", str(index)],
    )
    assert result.exit_code == 0, result.output
    assert "strong" in result.stdout and "misleading" in result.stdout
    # An evergreen claim reviewed in mid-2025: over the default ten-year window only from
    # 2035 on, so the flag depends on today's date; the JSON says which and by how many days.
    [top] = match_json(index, "You can see the Great Wall of China from the Moon.", "--limit", "1")
    assert top["possibly_outdated"] is (top["age_days"] > 3650)
    assert runner.invoke(app, ["match", "Penguins fly.", "--index", str(index)]).stdout.strip() == (
        "no matching fact-check"
    )
    everything = match_json(index, "Penguins fly.", "--all")
    assert everything and all(m["strength"] == "none" for m in everything)


def test_import_a_url_reads_its_json_ld(tmp_path: Path) -> None:
    index = tmp_path / "claims.sqlite"
    html = (FIXTURES / "nested_item_reviewed.html").read_text(encoding="utf-8")
    with LocalHTTPServer() as server:
        server.add("/check", Route(body=html))
        server.add("/empty", Route(body="<html><body>No markup here.</body></html>"))
        obj = SimpleNamespace(fetch=FetchConfig(allow_hosts=["127.0.0.1"]))
        result = runner.invoke(
            app,
            ["import", server.url("/check"), server.url("/empty"), "--index", str(index)],
            obj=obj,
        )
        check_url = server.url("/check")
    assert result.exit_code == 1
    assert f"{check_url}: 1 review(s), 1 new or changed, 0 unrated" in result.stdout
    assert "no ClaimReview or Fact Check API claims" in result.stderr
    [found] = match_json(index, "Hot lemon water kills the flu virus in the throat.")
    assert found["record"]["review_url"] == "https://checkers.example/fact-check/lemon-water-flu"


def test_match_without_an_index_says_how_to_make_one(tmp_path: Path) -> None:
    result = runner.invoke(app, ["match", "anything", "--index", str(tmp_path / "none.sqlite")])
    assert result.exit_code == 1
    assert "factnote claims import" in result.stderr


def test_hostile_files_fail_one_by_one_and_the_rest_are_imported(tmp_path: Path) -> None:
    """Issue 16, item 4: a `javascript:` review URL and nested JSON-LD stopped the import at
    the first of them; now each gets a `failed:` line, the files after them are imported and
    the exit status says something failed."""
    good_review = {
        "@type": "ClaimReview",
        "url": "https://checkers.example/fact-check/ok",
        "claimReviewed": "Bananas cure the common cold.",
        "reviewRating": {"alternateName": "False"},
    }
    javascript = tmp_path / "javascript.json"
    javascript.write_text(
        json.dumps([{**good_review, "url": "javascript:alert(1)"}, good_review]), encoding="utf-8"
    )
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00\x00garbage\x00")
    index = tmp_path / "claims.sqlite"
    result = runner.invoke(
        app,
        [
            "import",
            str(javascript),
            str(nested),
            str(binary),
            str(tmp_path / "missing.json"),
            str(FIXTURES / "factcheck_api.json"),
            "--index",
            str(index),
        ],
    )
    assert result.exit_code == 1
    failed = [
        line for line in result.stderr.splitlines() if line.startswith("factnote: error: failed: ")
    ]
    assert failed == [
        f"factnote: error: failed: {javascript}: ClaimReview 1: review URL "
        "'javascript:alert(1)' is not an http(s) URL",
        f"factnote: error: failed: {nested}: JSON nested deeper than 64 levels",
        f"factnote: error: failed: {binary}: a binary file, neither JSON nor HTML",
        f"factnote: error: failed: {tmp_path / 'missing.json'}: no such file",
    ]
    assert f"{javascript}: 1 review(s), 1 new or changed" in result.stdout
    assert "factcheck_api.json: 3 review(s), 3 new or changed" in result.stdout
    assert "claim index holds 4 review(s)" in result.stdout


def test_the_file_size_cap_comes_from_the_claims_settings(tmp_path: Path) -> None:
    index = tmp_path / "claims.sqlite"
    source = FIXTURES / "factcheck_api.json"
    obj = SimpleNamespace(claims=ClaimsConfig(import_max_bytes=100))
    result = runner.invoke(app, ["import", str(source), "--index", str(index)], obj=obj)
    assert result.exit_code == 1
    assert f"failed: {source}: over 100 bytes" in result.stderr


def test_an_unreachable_url_fails_and_the_next_source_is_imported(tmp_path: Path) -> None:
    index = tmp_path / "claims.sqlite"
    html = (FIXTURES / "nested_item_reviewed.html").read_text(encoding="utf-8")
    with LocalHTTPServer() as server:
        server.add("/check", Route(body=html))
        closed = server.url("/check")
    obj = SimpleNamespace(fetch=FetchConfig(allow_hosts=["127.0.0.1"], timeout_s=2.0))
    result = runner.invoke(
        app,
        ["import", closed, str(FIXTURES / "multilingual.json"), "--index", str(index)],
        obj=obj,
    )
    assert result.exit_code == 1
    [line] = [x for x in result.stderr.splitlines() if x.startswith("factnote: error: failed: ")]
    assert line.startswith(f"factnote: error: failed: {closed}: cannot fetch: ")
    assert "multilingual.json: 3 review(s)" in result.stdout


def _api_file(path: Path, ratings: list[str]) -> Path:
    """Fact Check Tools claims:search JSON (the API's documented shape), one review per rating."""
    claims = [
        {
            "text": f"Claim number {n} about the moon being made of cheese.",
            "claimReview": [
                {
                    "publisher": {"name": "Checkers Weekly", "site": "checkers.example"},
                    "url": f"https://checkers.example/fact-check/{n}",
                    "textualRating": rating,
                    "languageCode": "en",
                }
            ],
        }
        for n, rating in enumerate(ratings)
    ]
    path.write_text(json.dumps({"claims": claims}), encoding="utf-8")
    return path


def test_import_lists_the_rating_texts_nobody_mapped_and_the_rating_map_maps_them(
    tmp_path: Path,
) -> None:
    source = _api_file(
        tmp_path / "api.json", ["Spicy take", "Barely True", "Spicy take", "Wobbly", "Satire"]
    )
    index = tmp_path / "claims.sqlite"
    result = runner.invoke(app, ["import", str(source), "--index", str(index)])
    assert result.exit_code == 0, result.output
    assert "unknown rating texts" in result.stdout
    assert '  "Spicy take": 2\n  "Wobbly": 1\n' in result.stdout
    assert "Barely True" not in result.stdout and "Satire" not in result.stdout

    mapped = SimpleNamespace(claims=ClaimsConfig(rating_map={"spicy take": "false"}))
    again = runner.invoke(
        app, ["import", str(source), "--index", str(tmp_path / "b.sqlite")], obj=mapped
    )
    assert '"Spicy take"' not in again.stdout and '  "Wobbly": 1\n' in again.stdout
    assert "5 review(s), 5 new or changed, 2 unrated" in again.stdout  # Wobbly and Satire


def test_match_file_prints_one_json_line_per_query_with_ids(tmp_path: Path) -> None:
    index = tmp_path / "claims.sqlite"
    runner.invoke(app, ["import", str(FIXTURES / "graph_numeric.html"), "--index", str(index)])
    queries = tmp_path / "queries.txt"
    queries.write_text(
        "wall\tYou can see the Great Wall of China from the Moon.\n\nPenguins fly.\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["match", "--file", str(queries), "--index", str(index), "--all"])
    assert result.exit_code == 0, result.output
    wall, penguins = (json.loads(line) for line in result.stdout.splitlines())
    assert wall["id"] == "wall" and penguins["id"] == "3"  # no tab: the line number
    top = wall["matches"][0]
    assert top["strength"] == "strong" and top["demoted"] == []
    assert top["url"].startswith("http") and 0.0 <= top["score"] <= 1.0
    # The fixture's ClaimReview has no headline of its own (its page's name is not one).
    assert "title_cosine" in top and top["title_cosine"] is None
    # Age is its own field: an old review still shows how well it matched.
    assert top["possibly_outdated"] is (top["age_days"] > 3650)
    assert all(m["strength"] == "none" for m in penguins["matches"])


def test_match_needs_a_text_or_a_file_and_says_when_the_file_is_unreadable(
    tmp_path: Path,
) -> None:
    index = tmp_path / "claims.sqlite"
    runner.invoke(app, ["import", str(FIXTURES / "graph_numeric.html"), "--index", str(index)])
    neither = runner.invoke(app, ["match", "--index", str(index)])
    assert neither.exit_code == 2 and "--file" in neither.stderr
    missing = runner.invoke(app, ["match", "--file", str(tmp_path / "nope"), "--index", str(index)])
    assert missing.exit_code == 2 and "cannot read" in missing.stderr
