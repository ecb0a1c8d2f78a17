"""Publisher credibility: registrable domains, input normalisation and matching order."""

from __future__ import annotations

import socket
from typing import Any

import pytest
import tldextract

from pipeline.records import Tier
from pipeline.sources.credibility import (
    PublisherTable,
)
from pipeline.web import domains
from pipeline.web.domains import registrable_domain
from tests.pipeline.sources.credibility.helpers import (
    _table,
)

# -- registrable domains and input normalisation ---------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("news.bbc.co.uk", "bbc.co.uk"),
        ("https://news.bbc.co.uk/news/world-123", "bbc.co.uk"),
        ("https://news.bbc.co.uk:8443/news?x=1#frag", "bbc.co.uk"),
        ("HTTP://WWW.Example.COM/Path", "example.com"),
        ("www.example.com:8080", "example.com"),
        ("//example.org/a", "example.org"),
        ("a.b.c.example.com.au", "example.com.au"),
        ("data.gov.uk", "data.gov.uk"),  # gov.uk is a public suffix
        ("www.gov.uk", "gov.uk"),  # a public suffix that is itself a site
        ("example.com.", "example.com"),  # fully qualified name
    ],
)
def test_registrable_domain_of_domains_and_urls(query: str, expected: str) -> None:
    assert registrable_domain(query) == expected


def test_idn_and_punycode_forms_are_the_same_domain() -> None:
    assert registrable_domain("https://www.Bücher.de:443/katalog") == "xn--bcher-kva.de"
    assert registrable_domain("shop.xn--bcher-kva.de") == "xn--bcher-kva.de"
    table = _table(("bücher.de", Tier.MEDIUM))
    assert table.lookup("https://xn--bcher-kva.de/x").matched == "xn--bcher-kva.de"
    assert table.lookup("http://shop.bücher.de").tier is Tier.MEDIUM
    assert registrable_domain("пример.рф") == "xn--e1afmkfd.xn--p1ai"


@pytest.mark.parametrize(
    "query", ["127.0.0.1", "http://192.168.1.10:8080/x", "http://[::1]:8000/", "2001:db8::1"]
)
def test_ip_addresses_have_no_registrable_domain_and_rate_unknown(query: str) -> None:
    assert registrable_domain(query) == ""
    rating = PublisherTable.default().lookup(query)
    assert rating.tier is Tier.UNKNOWN
    assert rating.source == "unlisted"
    assert "IP address" in rating.reason


@pytest.mark.parametrize("query", ["", "   ", "http://[::1", "ex ample.com", "localhost:8000"])
def test_lookup_of_unusable_input_is_unknown_and_never_raises(query: str) -> None:
    rating = PublisherTable.default().lookup(query)
    assert rating.tier is Tier.UNKNOWN
    assert rating.source == "unlisted"
    assert rating.matched == ""


def test_rating_reports_query_domain_and_matched_entry() -> None:
    rating = PublisherTable.default().lookup("https://www.bbc.co.uk/news/world")
    assert rating.query == "https://www.bbc.co.uk/news/world"
    assert rating.domain == "bbc.co.uk"
    assert rating.matched == "bbc.co.uk"
    assert rating.source == "default table"
    assert rating.reason


def test_tldextract_never_touches_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[str] = []

    def refuse(name: str) -> Any:
        def _refuse(*args: Any, **kwargs: Any) -> Any:
            attempts.append(name)
            raise OSError(f"network access attempted via socket.{name}")

        return _refuse

    monkeypatch.setattr(socket, "socket", refuse("socket"))
    monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))

    # Control: an extractor built with default settings does try to fetch the suffix list,
    # so the guard above would see a fetch by ours.
    tldextract.TLDExtract(cache_dir=None)("news.bbc.co.uk")
    assert attempts, "the socket guard did not observe a default tldextract fetch"
    attempts.clear()

    domains.suffix_extractor.cache_clear()
    domains.registrable_host.cache_clear()
    try:
        assert registrable_domain("https://news.bbc.co.uk/x") == "bbc.co.uk"
        table = PublisherTable.default()
        assert table.lookup("https://www.reuters.com/world/").tier is Tier.HIGH
        assert table.lookup("dept.gov.uk").source == "rule:government"
    finally:
        domains.suffix_extractor.cache_clear()
        domains.registrable_host.cache_clear()
    assert attempts == []


def test_suffix_extractor_is_built_once() -> None:
    assert domains.suffix_extractor() is domains.suffix_extractor()


# -- matching order --------------------------------------------------------------------------


def test_path_entry_matches_by_prefix_and_the_longest_prefix_wins() -> None:
    table = _table(
        ("science.org", Tier.MEDIUM),
        ("science.org/doi", Tier.HIGH),
        ("science.org/doi/10.1126/sciadv", Tier.LOW),
    )
    assert table.lookup("https://www.science.org/doi/10.1126/science.abc").matched == (
        "science.org/doi"
    )
    assert table.lookup("https://www.science.org/doi/10.1126/science.abc").tier is Tier.HIGH
    deep = table.lookup("science.org/doi/10.1126/sciadv/123?utm_source=x")
    assert (deep.matched, deep.tier) == ("science.org/doi/10.1126/sciadv", Tier.LOW)
    assert table.lookup("https://science.org/doi").tier is Tier.HIGH
    assert table.lookup("https://science.org/DOI/x").tier is Tier.HIGH  # paths compared lower


def test_path_entry_matches_only_on_segment_boundaries() -> None:
    table = _table(("science.org", Tier.MEDIUM), ("science.org/doi", Tier.HIGH))
    rating = table.lookup("https://www.science.org/doings/today")
    assert (rating.tier, rating.matched) == (Tier.MEDIUM, "science.org")
    assert table.lookup("science.org/do").matched == "science.org"


def test_path_entry_belongs_to_its_exact_host() -> None:
    table = _table(("science.org", Tier.MEDIUM), ("science.org/doi", Tier.HIGH))
    assert table.lookup("https://blogs.science.org/doi/x").matched == "science.org"


def test_path_entry_without_domain_entry_leaves_other_paths_to_rules() -> None:
    table = _table(("example.com/news", Tier.LOW))
    assert table.lookup("example.com/news/today").tier is Tier.LOW
    assert table.lookup("example.com/shop").source == "unlisted"


def test_full_host_entry_beats_its_registrable_domain_entry() -> None:
    table = _table(("example.co.uk", Tier.LOW), ("news.example.co.uk", Tier.HIGH))
    assert table.lookup("https://news.example.co.uk/story").tier is Tier.HIGH
    assert table.lookup("https://live.news.example.co.uk/x").matched == "news.example.co.uk"
    assert table.lookup("https://shop.example.co.uk/").matched == "example.co.uk"
    assert table.lookup("https://www.example.co.uk/").matched == "example.co.uk"


def test_table_entry_beats_class_rule() -> None:
    table = PublisherTable.default()
    rating = table.lookup("https://www.brookings.edu/articles/x")
    assert rating.source == "default table"
    assert rating.reference is False  # a think tank on .edu is not an academic reference


def test_matching_never_climbs_to_a_public_suffix() -> None:
    table = PublisherTable()
    with pytest.raises(ValueError, match="public suffix"):
        table.add_entry("localdomain", Tier.HIGH, "no suffix", "test")
    table.add_entry("co.uk", Tier.HIGH, "a public suffix entry", "test")
    assert table.lookup("anything.co.uk").source == "unlisted"
