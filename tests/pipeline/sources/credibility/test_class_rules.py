"""Publisher credibility: class rules for hosts the table does not list."""

from __future__ import annotations

import pytest

from pipeline.records import Tier
from pipeline.sources.credibility import (
    ACADEMIC_SUFFIXES,
    GOVERNMENT_SUFFIXES,
    PREPRINT_DOMAINS,
    SOCIAL_DOMAINS,
    PublisherTable,
)

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
def test_user_generated_rule_rates_social_platforms_unknown(domain: str) -> None:
    rating = PublisherTable.default().lookup(f"https://{domain}/someone/status/1")
    assert (rating.tier, rating.source) == (Tier.UNKNOWN, "rule:user-generated")
    assert rating.reason.startswith("user-generated content: the platform vouches for no one")


def test_user_generated_rule_lists_the_required_platforms() -> None:
    required = {"x.com", "twitter.com", "facebook.com", "instagram.com", "tiktok.com",
                "youtube.com", "youtu.be", "reddit.com", "bsky.app", "threads.net", "medium.com",
                "substack.com", "t.me", "rumble.com", "linkedin.com", "quora.com",
                "pinterest.com"}  # fmt: skip
    assert required <= set(SOCIAL_DOMAINS)
    # Subdomains of a platform (a Substack newsletter) are user content too.
    rating = PublisherTable.default().lookup("someauthor.substack.com/p/x")
    assert rating.source == "rule:user-generated"


def test_unlisted_commercial_domain_is_unknown() -> None:
    rating = PublisherTable.default().lookup("https://www.some-unlisted-shop-4417.com/x")
    assert (rating.tier, rating.source, rating.matched, rating.reference) == (
        Tier.UNKNOWN,
        "unlisted",
        "",
        False,
    )
