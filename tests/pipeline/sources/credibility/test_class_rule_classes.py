"""Publisher credibility: the class rules added for the sources helpful Community Notes cite
(issue 29): any country's `edu.`/`ac.` universities, registered organisations, museums,
treaty-based organisations and standards bodies outside `.int`, and Google result links read
as the page they lead to."""

from __future__ import annotations

import pytest

from pipeline.records import Tier
from pipeline.sources.credibility import PublisherTable


@pytest.fixture(scope="module")
def table() -> PublisherTable:
    return PublisherTable.default()


@pytest.mark.parametrize(
    ("host", "pattern"),
    [("www.hcmus.edu.vn", "*.edu.vn"), ("ut.ac.ir", "*.ac.ir"), ("lib.uom.ac.mu", "*.ac.mu")],
)
def test_any_countrys_edu_and_ac_second_level_is_academic(
    table: PublisherTable, host: str, pattern: str
) -> None:
    rating = table.lookup(f"https://{host}/research")
    assert (rating.tier, rating.source, rating.matched) == (Tier.MEDIUM, "rule:academic", pattern)
    assert rating.reference


@pytest.mark.parametrize("host", ["edu.example", "my-edu.vn", "edu.vn", "x.edu.com", "x.ac"])
def test_the_pattern_needs_the_label_under_a_two_letter_country_code(
    table: PublisherTable, host: str
) -> None:
    assert table.lookup(host).source != "rule:academic"


def test_suffix_filters_for_search_leave_the_patterns_out(table: PublisherTable) -> None:
    medium = table.suffixes_for(Tier.MEDIUM)
    assert "edu" in medium and "or.jp" in medium
    assert not [s for s in medium if "*" in s]


@pytest.mark.parametrize(
    ("query", "tier", "source"),
    [
        ("https://www.jspmi.or.jp/about", Tier.MEDIUM, "rule:registered-organisation"),
        ("https://kosaf.or.kr", Tier.MEDIUM, "rule:registered-organisation"),
        ("https://www.example-collections.museum/objects/1", Tier.MEDIUM, "rule:museum"),
        ("https://home.cern.ch/news", Tier.HIGH, "rule:intergovernmental"),
        ("https://www.unrwa.org/newsroom", Tier.HIGH, "rule:intergovernmental"),
        ("https://www.iso.org/standard/62085.html", Tier.HIGH, "rule:standards"),
        ("https://datatracker.ietf.org/doc/html/rfc9110", Tier.HIGH, "rule:standards"),
        ("https://www.w3.org/TR/WCAG22/", Tier.HIGH, "rule:standards"),
    ],
)
def test_class_rules_rate_their_class(
    table: PublisherTable, query: str, tier: Tier, source: str
) -> None:
    rating = table.lookup(query)
    assert (rating.tier, rating.source) == (tier, source)


def test_a_registered_organisation_is_not_a_reference(table: PublisherTable) -> None:
    assert not table.lookup("jshm.or.jp").reference
    assert table.lookup("iso.org").reference


def test_the_table_still_wins_over_a_rule(table: PublisherTable) -> None:
    # un.org, a table entry, never reaches the intergovernmental rule.
    assert table.lookup("https://www.un.org/en/").source == "default table"


@pytest.mark.parametrize(
    "link",
    [
        # Google's mobile results page: the target in `url`, separators HTML-escaped as they
        # are in a note's text.
        "https://www.google.com/url?sa=t&amp;source=web&amp;rct=j&amp;url=https://www.cdc.gov/flu/&amp;ved=2a",
        "https://www.google.com/url?q=https://www.cdc.gov/flu/&amp;sa=U",
        "https://www.google.nl/url?url=https://www.cdc.gov/flu/",
        # Google's AMP viewer, and an image result: the page the image is on.
        "https://www.google.com/amp/s/www.cdc.gov/flu/index.html",
        "https://www.google.com/imgres?imgurl=https%3A%2F%2Fimg.example%2Fa.jpg&amp;"
        "imgrefurl=https%3A%2F%2Fwww.cdc.gov%2Fflu%2F&amp;docid=x",
    ],
)
def test_google_result_links_are_rated_as_their_target(table: PublisherTable, link: str) -> None:
    rating = table.lookup(link)
    assert (rating.domain, rating.tier) == ("cdc.gov", Tier.HIGH)
    assert "google" in rating.reason


def test_a_google_search_page_is_not_a_source(table: PublisherTable) -> None:
    assert table.lookup("https://www.google.com/search?q=is+it+true").tier is Tier.UNKNOWN
