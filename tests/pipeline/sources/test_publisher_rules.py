"""Tests for the rule families and entries added where notes writers cite (issue 14, item 6):
government suffixes beyond the US/UK, Japanese public and news sites, reference works,
statistics publishers, the user-generated-content rule, and links rated as their target
(DOI registrants, archive copies, redirect endpoints, publishers' own shorteners)."""

from __future__ import annotations

import pytest

from pipeline.config import CredibilityConfig, FetchConfig
from pipeline.records import Tier
from pipeline.sources.credibility import PublisherTable
from pipeline.sources.publisher_rules import (
    GOVERNMENT_SUFFIXES,
    SOCIAL_DOMAINS,
    USER_CONTENT_DOMAINS,
    WIKI_REFERENCE_DOMAINS,
)
from pipeline.web.domains import parse_host
from pipeline.web.redirectors import (
    doi_registrants,
    offline_target,
    redirectors,
    unwrap,
)
from pipeline.web.resolve import LinkResolver


def _needs_resolving(url: str) -> bool:
    """What the link resolver is asked before it goes to the network (no request is sent)."""
    return LinkResolver(CredibilityConfig(), FetchConfig()).handles(url)


@pytest.fixture(scope="module")
def table() -> PublisherTable:
    return PublisherTable.default()


def looked_up(table: PublisherTable, url: str) -> tuple[Tier, str, str, bool]:
    """A lookup's tier, the rule or list that gave it, what it matched and whether the
    publisher is a reference body."""
    rating = table.lookup(url)
    return rating.tier, rating.source, rating.matched, rating.reference


# -- public bodies outside the US and UK -------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "suffix"),
    [
        ("https://www.city.yokohama.lg.jp/kurashi/", "lg.jp"),
        ("https://www.pref.osaka.lg.jp/", "lg.jp"),
        ("https://www.cao.go.jp/", "go.jp"),
        ("https://www.gov.br/saude/pt-br", "gov.br"),
        ("https://portal.stf.jus.br/noticias/", "jus.br"),
        ("https://www.camara.leg.br/noticias/1", "leg.br"),
        ("https://www.argentina.gob.ar/salud", "gob.ar"),
        ("https://www.gub.uy/ministerio", "gub.uy"),
        ("https://www.sanidad.gob.es/", "gob.es"),
        ("https://www.salute.gov.it/", "gov.it"),
        ("https://www.stmgp.bayern.de/", "bayern.de"),
        ("https://www.bmi.bund.de/", "bund.de"),
        ("https://www.info.gouv.fr/", "gouv.fr"),
        ("https://www.mohfw.gov.in/", "gov.in"),
        ("https://www.met.police.uk/", "police.uk"),
        ("https://www.ontario.ca/page/x", "ontario.ca"),
        ("https://www2.gov.bc.ca/gov/content", "gov.bc.ca"),
        ("https://www.mfds.go.kr/", "go.kr"),
    ],
)
def test_government_suffix_rule_rates_public_bodies_high(
    table: PublisherTable, url: str, suffix: str
) -> None:
    assert looked_up(table, url) == (Tier.HIGH, "rule:government", f"*.{suffix}", True)


@pytest.mark.parametrize(
    "url",
    ["https://www.gov.br.evil.example/x", "https://evil-gov.br/x", "https://notlg.jp/x"],
)
def test_government_rule_matches_only_on_label_boundaries(table: PublisherTable, url: str) -> None:
    assert table.lookup(url).source != "rule:government"


def test_government_suffixes_are_unique_and_parse_as_hosts() -> None:
    assert len(GOVERNMENT_SUFFIXES) == len(set(GOVERNMENT_SUFFIXES))
    assert all(parse_host(s).host == s for s in GOVERNMENT_SUFFIXES)
    assert {"lg.jp", "go.jp", "gouv.fr", "bund.de", "gob.es", "gov.in", "gov.br", "europa.eu"} <= (
        set(GOVERNMENT_SUFFIXES)
    )


@pytest.mark.parametrize(
    ("url", "domain"),
    [
        ("https://www.bundesgesundheitsministerium.de/x", "bundesgesundheitsministerium.de"),
        ("https://www.assemblee-nationale.fr/dyn/x", "assemblee-nationale.fr"),
        ("https://www.boe.es/buscar/doc.php", "boe.es"),
        ("https://www.rbi.org.in/x", "rbi.org.in"),
        ("https://www.boj.or.jp/statistics/", "boj.or.jp"),
        ("https://www.ine.mx/x", "ine.mx"),
        ("https://www.osce.org/x", "osce.org"),
    ],
)
def test_public_bodies_outside_the_suffix_rules_are_high_reference_entries(
    table: PublisherTable, url: str, domain: str
) -> None:
    assert looked_up(table, url) == (Tier.HIGH, "default table", domain, True)


# -- Japanese sites ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "tier"),
    [
        ("https://www3.nhk.or.jp/news/html/x.html", Tier.MEDIUM),
        ("https://www.yomiuri.co.jp/national/x/", Tier.MEDIUM),
        ("https://www.sankei.com/article/x/", Tier.MEDIUM),
        ("https://www.jiji.com/jc/article?k=x", Tier.MEDIUM),
        ("https://www.tokyo-np.co.jp/article/1", Tier.MEDIUM),
        ("https://newsdig.tbs.co.jp/articles/-/1", Tier.MEDIUM),
        ("https://www.afpbb.com/articles/-/1", Tier.HIGH),
        ("https://nordot.app/1", Tier.MEDIUM),
        ("https://bunshun.jp/articles/-/1", Tier.LOW),
        ("https://www.mhlw.go.jp/stf/x.html", Tier.HIGH),
        ("https://www.e-stat.go.jp/stat-search", Tier.HIGH),
        ("https://jxiv.jst.go.jp/index.php/jxiv/preprint/view/1", Tier.LOW),
    ],
)
def test_japanese_news_and_public_sites_are_rated(
    table: PublisherTable, url: str, tier: Tier
) -> None:
    rating = table.lookup(url)
    assert rating.tier is tier, rating
    assert rating.source in ("default table", "rule:government")


def test_japanese_news_aggregator_is_unknown_with_its_reason(table: PublisherTable) -> None:
    rating = table.lookup("https://news.yahoo.co.jp/articles/abc")
    assert (rating.tier, rating.matched) == (Tier.UNKNOWN, "news.yahoo.co.jp")
    assert "rate the original outlet" in rating.reason


@pytest.mark.parametrize(
    "url",
    [
        "https://note.com/someone/n/n1",
        "https://ameblo.jp/someone/entry-1.html",
        "https://togetter.com/li/1",
        "https://detail.chiebukuro.yahoo.co.jp/qa/question_detail/q1",
        "https://someone.hatenablog.com/entry/1",
        "https://www.nicovideo.jp/watch/sm1",
    ],
)
def test_japanese_user_content_falls_under_the_user_generated_rule(
    table: PublisherTable, url: str
) -> None:
    rating = table.lookup(url)
    assert (rating.tier, rating.source) == (Tier.UNKNOWN, "rule:user-generated")


# -- reference works --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "tier", "source"),
    [
        ("https://ja.wikipedia.org/wiki/x", Tier.MEDIUM, "rule:encyclopedia"),
        ("https://de.wikipedia.org/wiki/x", Tier.MEDIUM, "rule:encyclopedia"),
        ("https://en.wiktionary.org/wiki/x", Tier.MEDIUM, "rule:encyclopedia"),
        ("https://www.wikiwand.com/en/x", Tier.MEDIUM, "rule:encyclopedia"),
        ("https://www.britannica.com/topic/x", Tier.HIGH, "rule:encyclopedia"),
        ("https://www.merriam-webster.com/dictionary/x", Tier.MEDIUM, "default table"),
        ("https://www.oxfordreference.com/x", Tier.HIGH, "default table"),
        ("https://www.duden.de/rechtschreibung/x", Tier.HIGH, "default table"),
        ("https://dle.rae.es/x", Tier.HIGH, "default table"),
        ("https://www.treccani.it/enciclopedia/x", Tier.HIGH, "default table"),
        ("https://www.larousse.fr/dictionnaires/x", Tier.HIGH, "default table"),
        ("https://kotobank.jp/word/x", Tier.MEDIUM, "default table"),
        ("https://plato.stanford.edu/entries/x/", Tier.HIGH, "default table"),
        ("https://www.law.cornell.edu/uscode/text/1", Tier.HIGH, "default table"),
    ],
)
def test_reference_works_are_rated_as_references(
    table: PublisherTable, url: str, tier: Tier, source: str
) -> None:
    rating = table.lookup(url)
    assert (rating.tier, rating.source, rating.reference) == (tier, source, True)


def test_wikipedia_is_medium_never_high_and_says_why(table: PublisherTable) -> None:
    for domain in WIKI_REFERENCE_DOMAINS:
        rating = table.lookup(f"https://xx.{domain}/wiki/x")
        assert rating.tier is Tier.MEDIUM
        assert "user-edited" in rating.reason and "cite the primary source" in rating.reason


# -- statistics publishers --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "tier"),
    [
        ("https://www.statista.com/statistics/1/x/", Tier.MEDIUM),
        ("https://www.stat.go.jp/data/jinsui/", Tier.HIGH),
        ("https://www.destatis.de/DE/x", Tier.HIGH),
        ("https://www.ine.pt/x", Tier.HIGH),
        ("https://www.czso.cz/x", Tier.HIGH),
        ("https://fred.stlouisfed.org/series/UNRATE", Tier.HIGH),
        ("https://www.worldometers.info/coronavirus/", Tier.LOW),
        ("https://tradingeconomics.com/japan/gdp", Tier.LOW),
    ],
)
def test_statistics_publishers_are_rated(table: PublisherTable, url: str, tier: Tier) -> None:
    assert table.lookup(url).tier is tier


def test_statista_reason_points_to_the_original_source(table: PublisherTable) -> None:
    assert "names the source to cite" in table.lookup("statista.com").reason


# -- user-generated content -------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://harrypotter.fandom.com/wiki/x",
        "https://www.imdb.com/title/tt0111161/",
        "https://www.reddit.com/r/x/comments/1",
        "https://medium.com/@someone/x",
        "https://someone.substack.com/p/x",
        "https://www.youtube.com/watch?v=x",
        "https://github.com/someone/repo",
        "https://www.change.org/p/x",
        "https://someone.blogspot.com/2020/01/x.html",
        "https://namu.wiki/w/x",
    ],
)
def test_user_generated_rule_rates_platforms_unknown_with_that_reason(
    table: PublisherTable, url: str
) -> None:
    rating = table.lookup(url)
    assert (rating.tier, rating.source, rating.reference) == (
        Tier.UNKNOWN,
        "rule:user-generated",
        False,
    )
    assert rating.reason.startswith("user-generated content")


def test_no_table_entry_shadows_a_user_generated_platform(table: PublisherTable) -> None:
    for domain in SOCIAL_DOMAINS + USER_CONTENT_DOMAINS:
        assert table.lookup(f"https://{domain}/x").source == "rule:user-generated", domain


# -- links rated as their target, offline -----------------------------------------------------


@pytest.mark.parametrize(
    ("url", "domain", "tier"),
    [
        ("https://doi.org/10.1038/s41586-020-2012-7", "nature.com", Tier.HIGH),
        ("http://dx.doi.org/10.1016/S0140-6736(20)30183-5", "sciencedirect.com", Tier.MEDIUM),
        ("https://doi.org/10.3390/ijerph18052397", "mdpi.com", Tier.LOW),
        ("https://doi.org/10.1101/2020.03.30.20048058", "biorxiv.org", Tier.LOW),
        ("https://doi.org/10.15585/mmwr.mm7013e3", "cdc.gov", Tier.HIGH),
        ("https://doi.org/10.1002/14651858.CD013574.pub2", "cochranelibrary.com", Tier.HIGH),
        ("https://doi.org/10.1002/jmv.26232", "wiley.com", Tier.MEDIUM),
    ],
)
def test_doi_of_a_known_registrant_is_rated_as_its_publisher(
    table: PublisherTable, url: str, domain: str, tier: Tier
) -> None:
    rating = table.lookup(url)
    assert (rating.domain, rating.tier, rating.query) == (domain, tier, url)
    assert rating.reason.startswith("DOI 10.")
    assert not _needs_resolving(url)


def test_doi_of_an_unknown_registrant_needs_resolving(table: PublisherTable) -> None:
    url = "https://doi.org/10.99999/xyz"
    rating = table.lookup(url)
    assert (rating.tier, rating.source, rating.matched) == (
        Tier.UNKNOWN,
        "rule:redirector",
        "doi.org",
    )
    assert _needs_resolving(url)


@pytest.mark.parametrize(
    ("url", "domain", "via"),
    [
        (
            "https://web.archive.org/web/20200301000000/https://www.cdc.gov/coronavirus/x.html",
            "cdc.gov",
            "archived copy (web.archive.org)",
        ),
        (
            "web.archive.org/web/2021id_/http://www.who.int/news?x=1",
            "who.int",
            "archived copy (web.archive.org)",
        ),
        (
            "https://archive.ph/2023.05.01-120000/https://www.reuters.com/world/x",
            "reuters.com",
            "archived copy (archive.ph)",
        ),
        (
            "https://www.google.com/url?q=https://www.bbc.co.uk/news/x&sa=D",
            "bbc.co.uk",
            "redirect link (google.com)",
        ),
        (
            "https://l.facebook.com/l.php?u=https%3A%2F%2Fapnews.com%2Farticle%2Fx&h=AT0",
            "apnews.com",
            "redirect link (l.facebook.com)",
        ),
        (
            "https://www-theguardian-com.cdn.ampproject.org/c/s/www.theguardian.com/world/x",
            "theguardian.com",
            "AMP cache copy",
        ),
        ("https://nyti.ms/3xYz", "nytimes.com", "nyti.ms is nytimes.com's own link shortener"),
        ("https://reut.rs/3xYz", "reuters.com", "reut.rs is reuters.com's own link shortener"),
    ],
)
def test_wrapped_links_are_rated_as_their_target(
    table: PublisherTable, url: str, domain: str, via: str
) -> None:
    rating = table.lookup(url)
    assert rating.domain == domain
    assert rating.source == "default table"
    assert rating.reason.startswith(via + ": ")


def test_archive_short_ids_and_item_pages_keep_their_own_entries(table: PublisherTable) -> None:
    assert unwrap("https://archive.ph/AbC12") is None
    assert table.lookup("https://archive.ph/AbC12").matched == "archive.ph"
    assert table.lookup("https://archive.org/details/some-upload").matched == "archive.org"


def test_generic_shorteners_are_unknown_until_resolved(table: PublisherTable) -> None:
    for url in ("https://t.co/abc", "https://bit.ly/abc", "https://lnkd.in/abc"):
        rating = table.lookup(url)
        assert (rating.tier, rating.source) == (Tier.UNKNOWN, "rule:redirector"), url
        assert offline_target(url) is None and _needs_resolving(url)


def test_bundled_link_data_points_at_rated_publishers(table: PublisherTable) -> None:
    for host, redirector in redirectors().items():
        assert parse_host(host).host == host
        if redirector.kind == "publisher":
            assert table.lookup(redirector.publisher).tier is not Tier.UNKNOWN, host
    prefixes = [r.prefix for r in doi_registrants()]
    assert len(prefixes) == len(set(prefixes))
    for registrant in doi_registrants():
        assert table.lookup(registrant.domain).source != "unlisted", registrant
