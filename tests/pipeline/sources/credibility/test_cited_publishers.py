"""Publisher credibility: what helpful Community Notes cite (issue 29, item 8). Wikimedia's other
wikis are wikis like Wikipedia, archives that hold a copy of a page name no publisher of their
own, wiki farms and crowd-sourced databases are user content, and the table rates the
publishers notes cite (news outlets, popular-science publishers, museums, professional bodies,
media raters) by the same yardstick as the rows before them."""

from __future__ import annotations

import pytest

from pipeline.records import Tier
from pipeline.sources.credibility import CLASS_RULES, PublisherTable
from pipeline.web.redirectors import ARCHIVE_COPY_HOSTS, offline_target


@pytest.fixture(scope="module")
def table() -> PublisherTable:
    return PublisherTable.default()


@pytest.mark.parametrize(
    "url",
    [
        "https://de.m.wikiquote.org/wiki/Beispiel",
        "https://en.wikiquote.org/wiki/Albert_Einstein",
        "https://en.wikinews.org/wiki/x",
        "https://en.wikiversity.org/wiki/x",
        "https://species.wikimedia.org/wiki/Felis_catus",
    ],
)
def test_wikiquote_and_wikimedias_other_wikis_are_rated_as_wikis(
    table: PublisherTable, url: str
) -> None:
    rating = table.lookup(url)
    assert (rating.tier, rating.source) == (Tier.MEDIUM, "rule:encyclopedia")
    assert "user-edited" in rating.reason


def test_wikimedia_commons_stays_user_content_not_a_wiki_reference(table: PublisherTable) -> None:
    # Media files uploaded by anyone: the sister-project rule must not take them over.
    assert table.lookup("https://commons.wikimedia.org/wiki/File:x.jpg").source == (
        "rule:user-generated"
    )


@pytest.mark.parametrize("host", ["perma.cc", "ghostarchive.org", "megalodon.jp"])
def test_a_copy_archive_link_names_no_publisher_of_its_own(
    table: PublisherTable, host: str
) -> None:
    assert host in ARCHIVE_COPY_HOSTS
    rating = table.lookup(f"https://{host}/ABCD-1234")
    assert (rating.tier, rating.matched) == (Tier.UNKNOWN, host)
    assert "rate the original publisher" in rating.reason


@pytest.mark.parametrize("url", ["https://w.wiki/Abc1", "https://a.co/d/Example1"])
def test_wikimedia_and_amazon_shorteners_are_unknown_until_resolved(
    table: PublisherTable, url: str
) -> None:
    rating = table.lookup(url)
    assert (rating.tier, rating.source) == (Tier.UNKNOWN, "rule:redirector")
    assert offline_target(url) is None


@pytest.mark.parametrize(
    "url",
    [
        "https://1d6chan.miraheze.org/wiki/x",
        "https://tvtropes.org/pmwiki/pmwiki.php/Main/x",
        "https://liquipedia.net/dota2/x",
        "https://www.numbeo.com/cost-of-living/in/Tokyo",
        "https://www.inaturalist.org/observations/1",
    ],
)
def test_wiki_farms_and_crowd_sourced_databases_are_user_content(
    table: PublisherTable, url: str
) -> None:
    assert table.lookup(url).source == "rule:user-generated"


@pytest.mark.parametrize(
    ("url", "tier", "reference"),
    [
        ("https://hubblesite.org/contents/news-releases/2020/news-2020-01", Tier.HIGH, True),
        ("https://encyclopedia.ushmm.org/content/en/article/x", Tier.MEDIUM, True),
        ("https://www.nationalww2museum.org/war/articles/x", Tier.MEDIUM, True),
        ("https://www.livescience.com/x", Tier.MEDIUM, False),
        ("https://www.space.com/x", Tier.MEDIUM, False),
        ("https://phys.org/news/2024-01-x.html", Tier.MEDIUM, False),
        ("https://www.usni.org/magazines/proceedings/x", Tier.MEDIUM, False),
        ("https://www.aerosociety.com/news/x", Tier.MEDIUM, False),
        ("https://www.apa.org/topics/x", Tier.HIGH, False),
        ("https://www.chicagotribune.com/x", Tier.MEDIUM, False),
        ("https://www.kan.org.il/x", Tier.MEDIUM, False),
        ("https://www.vice.com/en/article/x", Tier.LOW, False),
        ("https://metro.co.uk/2024/01/01/x", Tier.LOW, False),
    ],
)
def test_publishers_helpful_notes_cite_are_rated(
    table: PublisherTable, url: str, tier: Tier, reference: bool
) -> None:
    rating = table.lookup(url)
    assert (rating.tier, rating.source, rating.reference) == (tier, "default table", reference)


MUSEUMS = (
    "ushmm.org", "nationalww2museum.org", "theworldwar.org", "annefrank.org", "yadvashem.org",
    "auschwitz.org", "iwm.org.uk", "britishmuseum.org", "911memorial.org", "louvre.fr",
    "rijksmuseum.nl", "metmuseum.org",
)  # fmt: skip


@pytest.mark.parametrize("host", MUSEUMS)
def test_museums_in_the_table_are_rated_as_the_museum_rule_rates(
    table: PublisherTable, host: str
) -> None:
    museum = next(rule for rule in CLASS_RULES if rule.name == "museum")
    rating = table.lookup(f"https://www.{host}/collections/x")
    assert (rating.tier, rating.reference, rating.source) == (
        museum.tier,
        museum.reference,
        "default table",
    )


@pytest.mark.parametrize("host", ["mediabiasfactcheck.com", "adfontesmedia.com"])
def test_media_raters_are_medium_pointers_not_references(table: PublisherTable, host: str) -> None:
    rating = table.lookup(f"https://{host}/x")
    assert (rating.tier, rating.reference) == (Tier.MEDIUM, False)
    assert "a pointer, not evidence" in rating.reason


@pytest.mark.parametrize(
    "url",
    [
        "https://news.yahoo.co.jp/expert/articles/0123456789abcdef",
        "https://uk.news.yahoo.com/x-123.html",
    ],
)
def test_news_aggregators_stay_unknown_and_point_at_the_original(
    table: PublisherTable, url: str
) -> None:
    rating = table.lookup(url)
    assert (rating.tier, rating.source) == (Tier.UNKNOWN, "default table")
    assert "rate the original" in rating.reason
