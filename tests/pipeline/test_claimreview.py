"""ClaimReview JSON-LD and Fact Check API importers, on fixture pages written for these tests."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.claimreview import (
    ClaimImportError,
    fetch_records,
    load_file,
    records_from_factcheck_api,
    records_from_html,
    records_from_jsonld,
)
from pipeline.claims import ClaimSource, Rating, normalise_rating, rating_from_scale
from pipeline.config import FetchConfig
from pipeline.fetch import Fetcher
from tests.fakes.http_server import LocalHTTPServer, Route

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claims"


def test_nested_item_reviewed_gives_claimant_dates_rating_and_publisher() -> None:
    html = (FIXTURES / "nested_item_reviewed.html").read_text(encoding="utf-8")
    [record] = records_from_html(html, "https://checkers.example/ignored-page-url")
    assert record.claim_text.startswith("Drinking hot lemon water every hour")
    assert record.claimant == "Wellness Page Demo"
    # The Claim has no date of its own: its first appearance dates it.
    assert record.claim_date == datetime(2026, 1, 2, tzinfo=UTC)
    assert record.review_date == datetime(2026, 1, 12, 8, 30, tzinfo=UTC)
    assert record.rating_text == "Pants on Fire"
    assert record.rating is Rating.FALSE
    assert record.publisher_name == "Checkers Weekly"
    assert record.publisher_site == "checkers.example"
    # The review's own URL wins over the page URL it was found on.
    assert record.review_url == "https://checkers.example/fact-check/lemon-water-flu"
    assert record.language == "en"
    assert record.source is ClaimSource.CLAIMREVIEW


def test_graph_in_a_commented_block_is_read_and_a_broken_block_skipped() -> None:
    html = (FIXTURES / "graph_numeric.html").read_text(encoding="utf-8")
    records = records_from_html(html)
    assert [r.review_url for r in records] == [
        "https://verify.example/checks/great-wall-from-space",
        "https://verify.example/checks/wall-length",
    ]
    wall, length = records
    # No textual rating: 2 on a 1..5 scale is "mostly false", i.e. misleading.
    assert wall.rating_text == ""
    assert wall.rating is Rating.MISLEADING
    assert wall.publisher_name == "Verify Desk"
    # A review without any rating is kept, as unrated.
    assert length.rating is Rating.UNRATED


def test_a_claim_review_without_claim_text_or_url_is_skipped() -> None:
    data = {"@type": "ClaimReview", "reviewRating": {"alternateName": "False"}}
    assert records_from_jsonld(data) == []
    # The page URL stands in for a missing review URL.
    data["claimReviewed"] = "Some claim"
    [record] = records_from_jsonld(data, "https://page.example/check")
    assert record.review_url == "https://page.example/check"


def test_non_english_ratings_are_normalised_from_a_json_ld_list() -> None:
    records = load_file(FIXTURES / "multilingual.json")
    assert [(r.language, r.rating_text, r.rating) for r in records] == [
        ("fr", "Faux", Rating.FALSE),
        ("es", "Engañoso", Rating.MISLEADING),
        ("de", "Richtig", Rating.TRUE),
    ]


def test_fact_check_api_gives_one_record_per_review() -> None:
    records = load_file(FIXTURES / "factcheck_api.json")
    assert [r.review_url for r in records] == [
        "https://checkers.example/fact-check/carrots-night-vision",
        "https://verificadores.example/es/zanahorias",
        "https://verify.example/checks/umbrella-ban",
    ]
    english, spanish, unrated = records
    assert english.claim_text == spanish.claim_text
    assert english.claimant == "Viral post demo"
    assert english.claim_date == datetime(2025, 9, 1, tzinfo=UTC)
    assert (english.rating, spanish.rating) == (Rating.FALSE, Rating.FALSE)
    assert (english.language, spanish.language) == ("en", "es")
    assert spanish.publisher_site == "verificadores.example"
    assert all(r.source is ClaimSource.FACTCHECK_API for r in records)
    assert unrated.rating is Rating.UNRATED and unrated.rating_text == ""


def test_fact_check_api_without_a_claims_list_is_an_error() -> None:
    with pytest.raises(ClaimImportError):
        records_from_factcheck_api({"claims": "nope"})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("False", Rating.FALSE),
        ("Faux", Rating.FALSE),
        ("Falso", Rating.FALSE),
        ("Falsch", Rating.FALSE),
        ("Fake", Rating.FALSE),
        ("Pants on Fire!", Rating.FALSE),
        ("Four Pinocchios", Rating.FALSE),
        ("Incorrect", Rating.FALSE),
        ("Not true", Rating.FALSE),
        ("Misleading", Rating.MISLEADING),
        ("Missing context", Rating.MISLEADING),
        ("Half-True", Rating.MISLEADING),
        ("Partly false", Rating.MISLEADING),
        ("Mostly False", Rating.MISLEADING),
        ("Engañoso", Rating.MISLEADING),
        ("Trompeur", Rating.MISLEADING),
        ("Teilweise falsch", Rating.MISLEADING),
        ("True", Rating.TRUE),
        ("Correct", Rating.TRUE),
        ("Verdadero", Rating.TRUE),
        ("Vrai", Rating.TRUE),
        ("Mixture", Rating.MIXED),
        ("Mixed", Rating.MIXED),
        ("Unproven", Rating.UNRATED),
        ("", Rating.UNRATED),
    ],
)
def test_textual_ratings_in_several_languages(text: str, expected: Rating) -> None:
    assert normalise_rating(text) is expected


@pytest.mark.parametrize(
    ("value", "best", "worst", "expected"),
    [
        (1, 5, 1, Rating.FALSE),
        (2, 5, 1, Rating.MISLEADING),
        (3, 5, 1, Rating.MIXED),
        (5, 5, 1, Rating.TRUE),
        ("0", "10", "0", Rating.FALSE),
        (-1, 5, 1, Rating.UNRATED),  # off the scale: some publishers' "no rating"
        (1, None, 1, Rating.UNRATED),  # no scale given
        ("n/a", 5, 1, Rating.UNRATED),
    ],
)
def test_numeric_ratings_need_their_scale(
    value: object, best: object, worst: object, expected: Rating
) -> None:
    assert rating_from_scale(value, best, worst) is expected


def test_text_rating_wins_over_the_number() -> None:
    assert normalise_rating("Misleading", 1, 5, 1) is Rating.MISLEADING
    assert normalise_rating("Unproven", 1, 5, 1) is Rating.FALSE


def test_load_file_rejects_what_is_neither_json_nor_html(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("just words", encoding="utf-8")
    with pytest.raises(ClaimImportError):
        load_file(bad)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(ClaimImportError):
        load_file(broken)


def test_a_page_is_fetched_and_its_json_ld_read() -> None:
    html = (FIXTURES / "nested_item_reviewed.html").read_text(encoding="utf-8")
    with (
        LocalHTTPServer() as server,
        Fetcher(FetchConfig(allow_hosts=["127.0.0.1"])) as fetcher,
    ):
        server.add("/check", Route(body=html))
        server.add("/gone", Route(status=404, body="not here"))
        [record] = fetch_records(server.url("/check"), fetcher)
        assert record.rating is Rating.FALSE
        with pytest.raises(ClaimImportError, match="http 404"):
            fetch_records(server.url("/gone"), fetcher)


def test_fetching_obeys_the_ssrf_guard() -> None:
    with LocalHTTPServer() as server, Fetcher(FetchConfig()) as fetcher:
        server.add("/check", Route(body="<html></html>"))
        with pytest.raises(ClaimImportError, match="ssrf"):
            fetch_records(server.url("/check"), fetcher)
