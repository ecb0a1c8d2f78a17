"""Tests for publisher credibility: matching, class rules, importers, layering, bundled table."""

from __future__ import annotations

import csv
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tldextract

from pipeline import credibility, domains
from pipeline.config import CredibilityConfig
from pipeline.credibility import (
    ACADEMIC_SUFFIXES,
    GOVERNMENT_SUFFIXES,
    PREPRINT_DOMAINS,
    SOCIAL_DOMAINS,
    TABLE_TIERS,
    CredibilityDataError,
    PublisherTable,
    load_table_csv,
)
from pipeline.domains import registrable_domain
from pipeline.records import Tier

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "credibility"
MUSE_FIXTURE = FIXTURES / "muse"
MBFC_FIXTURE = FIXTURES / "mbfc.csv"
SCORE_FIXTURE = FIXTURES / "scores.csv"
MUSE_REAL = Path(__file__).resolve().parents[3] / "shared" / "data" / "muse_publisher_tiers"
BUNDLED_CSV = Path(credibility.__file__).parent / "data" / "publishers.csv"

needs_muse_data = pytest.mark.skipif(
    not MUSE_REAL.is_dir(), reason=f"MUSE tier lists not present at {MUSE_REAL}"
)


def _table(*entries: tuple[str, Tier]) -> PublisherTable:
    table = PublisherTable()
    for key, tier in entries:
        table.add_entry(key, tier, f"test entry {key}", "test")
    return table


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


# -- class rules -----------------------------------------------------------------------------


def test_government_rule_covers_at_least_25_national_suffixes() -> None:
    assert len(GOVERNMENT_SUFFIXES) >= 25
    for required in ("gov", "mil", "gov.uk", "gov.au", "gc.ca", "canada.ca", "gouv.fr", "go.jp",
                     "gob.mx", "gob.es", "gov.br", "govt.nz", "gov.za", "gov.sg", "admin.ch",
                     "bund.de", "gv.at", "gov.ie", "gov.it", "europa.eu", "gov.in"):  # fmt: skip
        assert required in GOVERNMENT_SUFFIXES


@pytest.mark.parametrize(
    "host",
    [
        "some-unlisted-agency.gov",
        "www.army.mil",
        "dept-for-tests.gov.uk",
        "unlisted.gouv.fr",
        "unlisted.admin.ch",
        "unlisted.bund.de",
        "unlisted.europa.eu",
        "unlisted.canada.ca",
        "unlisted.go.jp",
    ],
)
def test_government_rule_rates_unlisted_public_bodies_high_reference(host: str) -> None:
    rating = PublisherTable.default().lookup(f"https://{host}/page")
    assert (rating.tier, rating.source, rating.reference) == (Tier.HIGH, "rule:government", True)
    assert rating.matched.startswith("*.")
    assert "government" in rating.reason


def test_intergovernmental_rule_rates_dot_int_high_reference() -> None:
    rating = PublisherTable.default().lookup("https://www.unlisted-body.int/report")
    assert (rating.tier, rating.source, rating.matched) == (
        Tier.HIGH,
        "rule:intergovernmental",
        "*.int",
    )
    assert rating.reference is True
    un = PublisherTable.default().lookup("https://www.un.org/en/")
    assert (un.tier, un.source, un.reference) == (Tier.HIGH, "default table", True)


@pytest.mark.parametrize(
    "host",
    ["cs.unlisted-university.edu", "www.unlisted.ac.uk", "unlisted.edu.au", "unlisted.ac.jp"],
)
def test_academic_rule_rates_universities_medium_reference(host: str) -> None:
    rating = PublisherTable.default().lookup(host)
    assert (rating.tier, rating.source, rating.reference) == (Tier.MEDIUM, "rule:academic", True)
    assert "not peer-reviewed" in rating.reason
    assert set(ACADEMIC_SUFFIXES) >= {"edu", "ac.uk", "edu.au", "ac.jp", "ac.nz", "edu.cn"}


def test_encyclopedia_rule_wikipedia_medium_britannica_high() -> None:
    table = PublisherTable.default()
    wiki = table.lookup("https://en.wikipedia.org/wiki/Measles")
    brit = table.lookup("https://www.britannica.com/science/measles")
    assert (wiki.tier, wiki.source, wiki.reference) == (Tier.MEDIUM, "rule:encyclopedia", True)
    assert "user-edited" in wiki.reason
    assert (brit.tier, brit.source, brit.reference) == (Tier.HIGH, "rule:encyclopedia", True)


@pytest.mark.parametrize("domain", PREPRINT_DOMAINS)
def test_preprint_rule_rates_servers_low(domain: str) -> None:
    rating = PublisherTable.default().lookup(f"https://www.{domain}/abs/2401.00001")
    assert (rating.tier, rating.source) == (Tier.LOW, "rule:preprint")
    assert "not peer-reviewed" in rating.reason
    assert rating.reference is False


@pytest.mark.parametrize("domain", SOCIAL_DOMAINS)
def test_social_rule_rates_user_content_unknown(domain: str) -> None:
    rating = PublisherTable.default().lookup(f"https://{domain}/someone/status/1")
    assert (rating.tier, rating.source) == (Tier.UNKNOWN, "rule:social")
    assert rating.reason == "user content: judge the author, not the platform"


def test_social_rule_lists_the_required_platforms() -> None:
    required = {"x.com", "twitter.com", "t.co", "facebook.com", "instagram.com", "tiktok.com",
                "youtube.com", "youtu.be", "reddit.com", "bsky.app", "threads.net", "medium.com",
                "substack.com", "t.me", "rumble.com", "linkedin.com", "quora.com",
                "pinterest.com"}  # fmt: skip
    assert required <= set(SOCIAL_DOMAINS)
    # Subdomains of a platform (a Substack newsletter) are user content too.
    assert PublisherTable.default().lookup("someauthor.substack.com/p/x").source == "rule:social"


def test_unlisted_commercial_domain_is_unknown() -> None:
    rating = PublisherTable.default().lookup("https://www.some-unlisted-shop-4417.com/x")
    assert (rating.tier, rating.source, rating.matched, rating.reference) == (
        Tier.UNKNOWN,
        "unlisted",
        "",
        False,
    )


# -- the bundled default table ---------------------------------------------------------------


def _bundled_rows() -> list[dict[str, str]]:
    with BUNDLED_CSV.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_bundled_table_has_300_unique_domains_each_with_a_reason() -> None:
    rows = _bundled_rows()
    keys = [row["domain"].strip().lower() for row in rows]
    assert len(keys) == len(set(keys)), "duplicate domains in publishers.csv"
    assert len({registrable_domain(k) for k in keys}) >= 300
    assert all(row["reason"].strip() for row in rows)
    reasons = [row["reason"].strip() for row in rows]
    assert len(set(reasons)) == len(reasons), "reasons must be specific, not boilerplate"
    assert all(row["tier"] in {t.value for t in TABLE_TIERS} for row in rows)
    assert all(row["reference"] in ("", "yes") for row in rows)
    assert all(row["domain"] == row["domain"].strip().lower() for row in rows)


def test_bundled_table_loads_without_errors_and_keeps_file_order() -> None:
    entries = PublisherTable.default().entries()
    assert [e.key for e in entries] == [row["domain"] for row in _bundled_rows()]
    assert all(e.source == "default table" for e in entries)


@pytest.mark.parametrize(
    ("domain", "tier"),
    [
        ("reuters.com", Tier.HIGH),
        ("apnews.com", Tier.HIGH),
        ("afp.com", Tier.HIGH),
        ("factcheck.afp.com", Tier.HIGH),
        ("who.int", Tier.HIGH),
        ("cdc.gov", Tier.HIGH),
        ("nih.gov", Tier.HIGH),
        ("ecdc.europa.eu", Tier.HIGH),
        ("nhs.uk", Tier.HIGH),
        ("ema.europa.eu", Tier.HIGH),
        ("fda.gov", Tier.HIGH),
        ("nature.com", Tier.HIGH),
        ("science.org", Tier.HIGH),
        ("thelancet.com", Tier.HIGH),
        ("nejm.org", Tier.HIGH),
        ("bmj.com", Tier.HIGH),
        ("jamanetwork.com", Tier.HIGH),
        ("cochranelibrary.com", Tier.HIGH),
        ("snopes.com", Tier.HIGH),
        ("politifact.com", Tier.HIGH),
        ("factcheck.org", Tier.HIGH),
        ("fullfact.org", Tier.HIGH),
        ("africacheck.org", Tier.HIGH),
        ("maldita.es", Tier.HIGH),
        ("correctiv.org", Tier.HIGH),
        ("boomlive.in", Tier.HIGH),
        ("naturalnews.com", Tier.EXCLUDED),
        ("infowars.com", Tier.EXCLUDED),
        ("beforeitsnews.com", Tier.EXCLUDED),
    ],
)
def test_bundled_table_covers_the_required_publishers(domain: str, tier: Tier) -> None:
    rating = PublisherTable.default().lookup(f"https://www.{domain}/x")
    assert (rating.tier, rating.source, rating.matched) == (tier, "default table", domain)


def test_bundled_table_marks_public_bodies_as_reference() -> None:
    table = PublisherTable.default()
    assert table.lookup("who.int").reference is True
    assert table.lookup("https://ec.europa.eu/eurostat/data").reference is True
    assert table.lookup("destatis.de").reference is True
    assert table.lookup("reuters.com").reference is False


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("domain,tier,reason\na.com,high,one\nwww.A.com,low,two\n", "already listed on line 2"),
        ("domain,tier,reason\na.com,great,one\n", "'great' is not a tier"),
        ("domain,tier,reason\na.com,authority,one\n", "cannot be given to a publisher"),
        ("domain,tier,reason\na.com,high,\n", "a.com has no reason"),
        ("domain,tier\na.com,high\n", "missing column"),
        ("domain,tier,reason,reference\na.com,high,one,maybe\n", "reference must be yes"),
    ],
)
def test_load_table_csv_refuses_malformed_tables(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "table.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CredibilityDataError, match=message):
        load_table_csv(path)


def test_load_table_csv_without_reference_column_leaves_it_to_the_rules(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("domain,tier,reason\nunlisted.gov,medium,local choice\nshop.com,low,r\n")
    table = PublisherTable(load_table_csv(path))
    assert table.lookup("unlisted.gov").reference is True
    assert table.lookup("shop.com").reference is False


def test_load_table_csv_names_the_line_of_a_duplicate(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("domain,tier,reason\na.com,high,one\nb.com,low,two\nA.com,low,three\n")
    with pytest.raises(CredibilityDataError, match=r"t\.csv:4: a\.com already listed on line 2"):
        load_table_csv(path)


# -- building the table ----------------------------------------------------------------------


def test_add_entry_normalises_keys() -> None:
    table = PublisherTable()
    table.add_entry("https://WWW.Example.org:8080/Health/News/?q=1", Tier.LOW, "r", "test")
    assert [e.key for e in table.entries()] == ["example.org/health/news"]


def test_add_entry_refuses_bad_keys_tiers_and_reasons() -> None:
    table = PublisherTable()
    with pytest.raises(ValueError):
        table.add_entry("not a domain", Tier.HIGH, "r", "test")
    with pytest.raises(ValueError, match="IP address"):
        table.add_entry("10.0.0.1", Tier.HIGH, "r", "test")
    with pytest.raises(ValueError):
        table.add_entry("example.org", Tier.AUTHORITY, "r", "test")
    with pytest.raises(ValueError):
        table.add_entry("example.org", Tier.HIGH, "  ", "test")
    assert table.entries() == []


def test_replacing_an_entry_keeps_its_place_in_the_table() -> None:
    table = _table(("a.com", Tier.HIGH), ("b.com", Tier.HIGH), ("c.com", Tier.HIGH))
    table.add_entry("b.com", Tier.LOW, "replaced", "override")
    assert [(e.key, e.tier) for e in table.entries()] == [
        ("a.com", Tier.HIGH),
        ("b.com", Tier.LOW),
        ("c.com", Tier.HIGH),
    ]


# -- MUSE importer ---------------------------------------------------------------------------


def _muse_lines(folder: Path) -> Iterator[tuple[Tier, str]]:
    for name, tier in (
        ("publisher_priority_high.txt", Tier.HIGH),
        ("publisher_priority_medium.txt", Tier.MEDIUM),
        ("publisher_priority_low.txt", Tier.LOW),
    ):
        for line in (folder / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                yield tier, line.strip()


@needs_muse_data
def test_muse_import_of_the_real_lists_counts_every_nonempty_line() -> None:
    table = PublisherTable.default()
    lines = list(_muse_lines(MUSE_REAL))
    count = table.import_muse_dir(MUSE_REAL)
    # Every non-empty line is either imported or reported; MUSE's medium list holds a few
    # lines that name no domain ("bemidji pioneer", "thedenverchannel").
    assert count + len(table.skipped) == len(lines)
    assert count >= 2400
    assert any("'bemidji pioneer'" in problem for problem in table.skipped)
    assert all("publisher_priority_medium.txt" in problem for problem in table.skipped)


@needs_muse_data
def test_muse_import_rates_every_listed_key_with_its_list_tier() -> None:
    table = PublisherTable.default()
    table.import_muse_dir(MUSE_REAL)
    expected: dict[str, Tier] = {}
    for tier, line in _muse_lines(MUSE_REAL):
        try:
            key = credibility._normalise_key(line)
        except ValueError:
            continue
        expected.setdefault(key, tier)
    for key, tier in expected.items():
        rating = table.lookup(f"https://www.{key}")
        assert (rating.tier, rating.source, rating.matched) == (tier, "muse", key), key


@needs_muse_data
def test_muse_path_entries_match_unlike_the_reference_code() -> None:
    # MUSE compared registrable domains only, so "science.org/journal/sciadv" never matched.
    table = PublisherTable()
    table.import_muse_dir(MUSE_REAL)
    rating = table.lookup("https://www.science.org/journal/sciadv/article/10.1126/x")
    assert (rating.tier, rating.matched) == (Tier.HIGH, "science.org/journal/sciadv")
    frontiers = table.lookup("https://www.frontiersin.org/journals/aging/articles/10.3389/x")
    assert frontiers.matched == "frontiersin.org/journals/aging"
    assert frontiers.tier is Tier.LOW


def test_muse_fixture_path_entries_and_tiers() -> None:
    table = PublisherTable()
    count = table.import_muse_dir(MUSE_FIXTURE)
    assert count == 9
    assert table.skipped == [
        f"{MUSE_FIXTURE / 'publisher_priority_medium.txt'}:6: "
        "not a domain or domain/path: 'not a domain'"
    ]
    assert table.lookup("https://science.org/journal/sciadv/x").tier is Tier.HIGH
    assert table.lookup("https://science.org/journal/other/x").tier is Tier.MEDIUM
    assert table.lookup("examplenews.com/science/space/story").tier is Tier.MEDIUM
    assert table.lookup("examplenews.com/sciencefiction").tier is Tier.LOW
    assert table.lookup("spaced-out.com").tier is Tier.MEDIUM
    # Listed High and Low: MUSE searched High first, so High it stays.
    assert table.lookup("examplejournal.org").tier is Tier.HIGH
    assert table.lookup("examplejournal.org").reason == "MUSE publisher list: high priority"


def test_muse_import_of_a_folder_without_lists_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CredibilityDataError, match="no MUSE tier list"):
        PublisherTable().import_muse_dir(tmp_path)


def test_muse_tier_does_not_erase_what_kind_of_body_a_publisher_is() -> None:
    table = PublisherTable.default()
    table.import_muse_dir(MUSE_FIXTURE)  # lists who.int as High, as the default does
    assert table.lookup("who.int").source == "muse"
    assert table.lookup("who.int").reference is True


# -- MBFC and score importers ---------------------------------------------------------------


def test_mbfc_import_applies_muses_usability_rule() -> None:
    table = PublisherTable()
    count = table.import_mbfc_csv(MBFC_FIXTURE)
    assert count == 13
    assert len(table.skipped) == 1 and "no domain here" in table.skipped[0]
    expected = {
        "veryhigh-least.com": Tier.HIGH,
        "veryhigh-proscience.org": Tier.HIGH,
        "veryhigh-leftcenter.com": Tier.MEDIUM,
        "high-rightcenter.com": Tier.MEDIUM,
        "mostly-least.com": Tier.LOW,
        "mixed-least.com": Tier.EXCLUDED,
        "high-left.com": Tier.EXCLUDED,
        "veryhigh-satire.com": Tier.EXCLUDED,
        "low-conspiracy.com": Tier.EXCLUDED,
        "verylow-questionable.com": Tier.EXCLUDED,
        "reuters.com": Tier.MEDIUM,
    }
    for domain, tier in expected.items():
        rating = table.lookup(domain)
        assert (rating.tier, rating.source) == (tier, "mbfc"), domain
    assert table.lookup("mostly-least.com").reason == (
        "MBFC rating: factuality mostly factual, bias least biased"
    )


def test_mbfc_import_keeps_class_rule_reference_for_unlisted_bodies() -> None:
    table = PublisherTable.default()
    table.import_mbfc_csv(MBFC_FIXTURE)
    blog = table.lookup("university-blog.edu")
    assert (blog.tier, blog.source, blog.reference) == (Tier.LOW, "mbfc", True)
    assert table.lookup("high-left.com").reference is False


def test_mbfc_import_without_required_columns_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_text("domain,factual\nx.com,high\n")
    with pytest.raises(CredibilityDataError, match=r"missing column.*bias"):
        PublisherTable().import_mbfc_csv(path)


def test_score_import_applies_cut_offs_inclusively() -> None:
    table = PublisherTable()
    count = table.import_score_csv(SCORE_FIXTURE, high=0.8, medium=0.6, low=0.4)
    assert count == 9
    assert len(table.skipped) == 2
    assert "'abc' is not a number" in table.skipped[0]
    assert "'1.5' is outside [0, 1]" in table.skipped[1]
    expected = {
        "top.com": Tier.HIGH,
        "edge-high.com": Tier.HIGH,
        "just-below-high.com": Tier.MEDIUM,
        "edge-medium.com": Tier.MEDIUM,
        "middling.com": Tier.LOW,
        "edge-low.com": Tier.LOW,
        "poor.com": Tier.EXCLUDED,
        "zero.com": Tier.EXCLUDED,
    }
    for domain, tier in expected.items():
        rating = table.lookup(domain)
        assert (rating.tier, rating.source) == (tier, "score"), domain
    assert table.lookup("not-a-number.com").source == "unlisted"


def test_score_import_follows_the_given_cut_offs() -> None:
    table = PublisherTable()
    table.import_score_csv(SCORE_FIXTURE, high=0.9, medium=0.5, low=0.0)
    assert table.lookup("edge-high.com").tier is Tier.MEDIUM
    assert table.lookup("middling.com").tier is Tier.MEDIUM
    assert table.lookup("zero.com").tier is Tier.LOW


def test_score_import_refuses_disordered_cut_offs() -> None:
    with pytest.raises(ValueError, match="cut-offs"):
        PublisherTable().import_score_csv(SCORE_FIXTURE, high=0.4, medium=0.6, low=0.8)


# -- layering --------------------------------------------------------------------------------


def test_from_config_without_layers_is_the_default_table() -> None:
    assert PublisherTable.from_config(CredibilityConfig()).entries() == (
        PublisherTable.default().entries()
    )


def test_from_config_layers_muse_then_mbfc_then_score_then_overrides() -> None:
    layers: dict[str, Any] = {}

    def rate() -> tuple[Tier, str]:
        rating = PublisherTable.from_config(CredibilityConfig(**layers)).lookup("layerednews.com")
        return rating.tier, rating.source

    assert rate() == (Tier.UNKNOWN, "unlisted")
    layers["muse_dir"] = str(MUSE_FIXTURE)
    assert rate() == (Tier.MEDIUM, "muse")
    layers["mbfc_csv"] = str(MBFC_FIXTURE)
    assert rate() == (Tier.HIGH, "mbfc")
    layers["score_csv"] = str(SCORE_FIXTURE)
    assert rate() == (Tier.LOW, "score")
    layers["overrides"] = {"layerednews.com": "EXCLUDED"}
    assert rate() == (Tier.EXCLUDED, "override")


def test_override_can_replace_a_default_entry_and_add_a_path() -> None:
    cfg = CredibilityConfig(
        overrides={"reuters.com": "medium", "bbc.co.uk/news/live": "low"},
    )
    table = PublisherTable.from_config(cfg)
    assert table.lookup("reuters.com").tier is Tier.MEDIUM
    assert table.lookup("reuters.com").reason == "operator override"
    assert table.lookup("bbc.co.uk/news/live/x").tier is Tier.LOW
    assert table.lookup("bbc.co.uk/news/x").tier is Tier.MEDIUM


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"example.com": "trusted"}, "not a tier"),
        ({"example.com": "authority"}, "cannot be given to a publisher"),
        ({"not a domain": "high"}, "not a domain"),
    ],
)
def test_bad_overrides_are_reported(overrides: dict[str, str], message: str) -> None:
    with pytest.raises(CredibilityDataError, match=message):
        PublisherTable.from_config(CredibilityConfig(overrides=overrides))


# -- search filters --------------------------------------------------------------------------


def test_domains_for_keeps_table_order_and_drops_covered_keys() -> None:
    table = PublisherTable.default()
    high = table.domains_for(Tier.HIGH)
    assert high[:3] == ["reuters.com", "apnews.com", "ap.org"]
    assert "afp.com" in high
    assert "factcheck.afp.com" not in high  # site:afp.com already covers it
    assert "usatoday.com/story/news/factcheck" in high  # usatoday.com itself is Medium
    assert "britannica.com" in high
    low = table.domains_for(Tier.LOW)
    assert "theguardian.com/commentisfree" in low
    assert set(PREPRINT_DOMAINS) <= set(low)
    assert "wikipedia.org" in table.domains_for(Tier.MEDIUM)
    assert "naturalnews.com" in table.domains_for(Tier.EXCLUDED)
    assert "x.com" in table.domains_for(Tier.UNKNOWN)


def test_domains_for_lets_the_table_decide_rule_domains() -> None:
    table = PublisherTable.default()
    table.add_entry("arxiv.org", Tier.MEDIUM, "operator trusts arXiv", "override")
    assert "arxiv.org" not in table.domains_for(Tier.LOW)
    assert "arxiv.org" in table.domains_for(Tier.MEDIUM)


def test_suffixes_for_gives_class_rule_suffixes() -> None:
    table = PublisherTable.default()
    assert {"gov", "gov.uk", "int"} <= set(table.suffixes_for(Tier.HIGH))
    assert {"edu", "ac.uk"} <= set(table.suffixes_for(Tier.MEDIUM))
    assert table.suffixes_for(Tier.EXCLUDED) == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("domain,tier,reason\na.com,high,caf\xe9\n".encode("latin-1"), "utf-8"),
        (b"domain,tier,reason\na.com,high," + b"x" * 200_000 + b"\n", "field larger"),
    ],
)
def test_load_table_csv_refuses_bytes_it_cannot_read_as_data_errors(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(content)
    with pytest.raises(CredibilityDataError, match=rf"t\.csv: cannot read: .*{message}"):
        load_table_csv(path)
