"""ClaimReview JSON-LD and Fact Check API importers, on fixture pages written for these tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.claims.claimreview import (
    ClaimImportError,
    fetch_records,
    load_file,
    read_factcheck_api,
    read_file,
    read_html,
    read_jsonld,
    records_from_factcheck_api,
    records_from_html,
    records_from_jsonld,
)
from pipeline.claims.index import ClaimRecord, ClaimSource
from pipeline.claims.ratings import Rating, normalise_rating, rating_from_scale
from pipeline.config import FetchConfig
from pipeline.web.fetch import Fetcher
from testing.fakes.http_server import LocalHTTPServer, Route

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "claims"


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
    # The API's `title` is the review's title (`pipeline.claims.review_titles`).
    assert english.review_title == "Carrots do not give night vision"
    assert spanish.review_title == "Zanahorias y visión nocturna"


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


# --- hostile input: one bad file or review never stops the others (issue 16, item 4) ---------


def review(
    url: str = "https://checkers.example/fact-check/a", **fields: object
) -> dict[str, object]:
    return {
        "@type": "ClaimReview",
        "url": url,
        "claimReviewed": "Bananas cure the common cold.",
        "datePublished": "2025-03-10",
        "reviewRating": {"alternateName": "False"},
        **fields,
    }


def test_a_reviews_headline_else_its_name_is_its_title_and_a_long_one_is_cut() -> None:
    both = review(headline="Do Bananas Cure Colds?", name="Bananas and colds")
    named = review("https://checkers.example/fact-check/b", name="Bananas and colds")
    long = review("https://checkers.example/fact-check/c", headline="Bananas " * 100)
    item_only = review(
        "https://checkers.example/fact-check/d",
        itemReviewed={"@type": "Claim", "name": "A claim's name is not the review's title"},
    )
    records = read_jsonld([both, named, long, item_only]).records
    titles = [r.review_title for r in records]
    assert titles[:2] == ["Do Bananas Cure Colds?", "Bananas and colds"]
    assert len(titles[2]) == 300 and titles[2].endswith("…")
    assert titles[3] == ""


def write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_javascript_review_url_fails_that_review_and_keeps_the_others(tmp_path: Path) -> None:
    data = [review("javascript:alert(1)"), review("https://checkers.example/fact-check/ok")]
    result = read_file(write_json(tmp_path / "mixed.json", data))
    assert [r.review_url for r in result.records] == ["https://checkers.example/fact-check/ok"]
    [failure] = result.failures
    assert failure.startswith("ClaimReview 1: ") and "not an http(s) URL" in failure
    # Every record that is read can be keyed (canonicalised) and so stored.
    assert all(r.key for r in result.records)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("javascript:alert(1)", "not an http(s) URL"),
        ("data:text/html,<script>alert(1)</script>", "not an http(s) URL"),
        ("file:///etc/passwd", "not an http(s) URL"),
        ("https://example.com:99999999999/x", "malformed"),
        ("https://[::1/x", "malformed"),
        ("https:///no-host", "no host"),
        ("https://who.int@evil.example/check", "credentials"),
        ("https://checkers.example/a b", "spaces or control characters"),
        ("https://checkers.example/\x1b[31m", "spaces or control characters"),
        ("https://checkers.example/" + "a" * 3000, "over 2048 characters"),
        ("", "no review URL"),
    ],
)
def test_review_urls_that_cannot_be_cited_are_refused(url: str, why: str) -> None:
    result = read_jsonld(review(url))
    assert result.records == []
    [failure] = result.failures
    assert why in failure
    assert "\x1b" not in failure  # untrusted text is shown escaped


def test_deeply_nested_json_ld_is_refused_by_an_explicit_limit(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(ClaimImportError, match="nested deeper than 64 levels"):
        read_file(deep)
    # Just under the limit parses; the review inside it is found when it is within reach.
    shallow = {"mainEntity": {"review": [review()]}}
    assert len(read_file(write_json(tmp_path / "ok.json", shallow)).records) == 1


def test_a_deep_value_inside_a_review_does_not_recurse_without_bound() -> None:
    author: dict[str, object] = {"name": "Checkers"}
    for _ in range(60):  # within the file's nesting limit, deeper than any real name
        author = {"name": author}
    [record] = read_jsonld(review(author=author)).records
    assert record.publisher_name == ""


def test_deep_nesting_in_a_page_block_skips_that_block_only() -> None:
    good = json.dumps(review())
    html = (
        '<html><head><script type="application/ld+json">'
        + "[" * 50_000
        + "]" * 50_000
        + '</script><script type="application/ld+json">'
        + good
        + "</script></head><body></body></html>"
    )
    assert len(read_html(html).records) == 1


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"claimReviewed": ""}, "no claim text"),
        ({"claimReviewed": "word " * 1000}, "claim text is 4999 characters"),
        ({"datePublished": "last Tuesday"}, "unreadable datePublished 'last Tuesday'"),
        ({"datePublished": "2025-02-30"}, "unreadable datePublished"),
        ({"datePublished": "9999-12-31T23:00:00-05:00"}, "unreadable datePublished"),
        ({"datePublished": "2999-01-01"}, "datePublished '2999-01-01' is in the future"),
        (
            {"itemReviewed": {"@type": "Claim", "datePublished": "not a date"}},
            "unreadable claim datePublished",
        ),
    ],
)
def test_reviews_with_missing_fields_or_bad_dates_are_failures(
    fields: dict[str, object], why: str
) -> None:
    result = read_jsonld([review(**fields), review("https://checkers.example/fact-check/b")])
    assert [r.review_url for r in result.records] == ["https://checkers.example/fact-check/b"]
    [failure] = result.failures
    assert failure.startswith("ClaimReview 1: ") and why in failure


def test_fact_check_api_records_fail_one_by_one() -> None:
    good = {"url": "https://checkers.example/ok", "textualRating": "False"}
    data = {
        "claims": [
            "not an object",
            {"text": "A claim.", "claimReview": "not a list"},
            {
                "text": "A claim.",
                "claimDate": "2025-99-01",
                "claimReview": [good, {"url": "javascript:void(0)"}, 7],
            },
            {"text": "Another claim.", "claimReview": [good]},
        ]
    }
    result = read_factcheck_api(data)
    assert [r.claim_text for r in result.records] == ["Another claim."]
    assert [f.split(":", 1)[0] for f in result.failures] == [
        "claims[0]",
        "claims[1]",
        "claims[2].claimReview[0]",
        "claims[2].claimReview[1]",
        "claims[2].claimReview[2]",
    ]
    assert "unreadable claimDate" in result.failures[2]
    assert "not an http(s) URL" in result.failures[3]


def test_numbers_a_float_cannot_hold_are_no_rating() -> None:
    huge = {"ratingValue": 10**400, "bestRating": 5, "worstRating": 1}
    [record] = read_jsonld(review(reviewRating=huge)).records
    assert record.rating is Rating.UNRATED


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b'{"claims": [', "invalid JSON"),
        (b"[" + b"9" * 5000 + b"]", "unreadable JSON"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
        (b"plain words", "neither JSON nor HTML"),
    ],
)
def test_unreadable_files_raise_with_the_reason(tmp_path: Path, content: bytes, why: str) -> None:
    path = tmp_path / "bad"
    path.write_bytes(content)
    with pytest.raises(ClaimImportError, match=why):
        read_file(path)


def test_a_file_over_the_size_cap_is_refused_unread(tmp_path: Path) -> None:
    path = write_json(tmp_path / "big.json", [review()] * 50)
    assert len(read_file(path).records) == 50
    with pytest.raises(ClaimImportError, match="over 1000 bytes"):
        read_file(path, max_bytes=1000)


def test_what_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ClaimImportError, match="not a regular file"):
        read_file(tmp_path)
    with pytest.raises(ClaimImportError, match="no such file"):
        read_file(tmp_path / "missing.json")
    if Path("/dev/zero").exists():  # endless: must never be read
        with pytest.raises(ClaimImportError, match="not a regular file"):
            read_file("/dev/zero")


def test_a_latin_1_file_is_decoded(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    data = [review(claimReviewed="Les bananes guérissent le rhume, été comme hiver.")]
    path.write_bytes(json.dumps(data, ensure_ascii=False).encode("latin-1"))
    [record] = read_file(path).records
    assert record.claim_text == "Les bananes guérissent le rhume, été comme hiver."


def test_reviews_are_numbered_across_the_json_ld_blocks_of_a_page() -> None:
    blocks = "".join(
        f'<script type="application/ld+json">{json.dumps(r)}</script>'
        for r in (review(), review("javascript:alert(1)"), review(claimReviewed=""))
    )
    result = read_html(f"<html><head>{blocks}</head><body></body></html>")
    assert len(result.records) == 1
    assert [f.split(":", 1)[0] for f in result.failures] == ["ClaimReview 2", "ClaimReview 3"]


def _api(*ratings: str) -> list[ClaimRecord]:
    from pipeline.claims.claimreview import read_factcheck_api

    claims = [
        {
            "text": f"Claim {n}",
            "claimReview": [{"url": f"https://checkers.example/{n}", "textualRating": r}],
        }
        for n, r in enumerate(ratings)
    ]
    return read_factcheck_api({"claims": claims}).records


def test_unknown_rating_texts_are_counted_and_known_ones_are_not() -> None:
    from pipeline.claims.claimreview import unknown_rating_texts

    records = _api("Spicy take", "Barely True", "Spicy take", "Satire", "", "Wobbly")
    assert unknown_rating_texts(records) == {"Spicy take": 2, "Wobbly": 1}
    assert unknown_rating_texts(records, {"SPICY TAKE": "false"}) == {"Wobbly": 1}


def test_a_deployers_rating_map_rerates_only_the_texts_it_names() -> None:
    from pipeline.claims.claimreview import apply_rating_map

    records = _api("Spicy take", "Barely True", "Wobbly")
    mapped = apply_rating_map(records, {"spicy take": "false"})
    assert [r.rating for r in mapped] == [Rating.FALSE, Rating.MISLEADING, Rating.UNRATED]
    assert apply_rating_map(records, {}) is records
