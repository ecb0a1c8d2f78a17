from datetime import UTC, datetime

import pytest

from pipeline.search.base import parse_published, site_query


def test_site_query_without_sites_is_the_query() -> None:
    assert site_query("  vaccine autism ", [], 5) == "vaccine autism"


def test_site_query_with_one_site_has_no_or_group() -> None:
    assert site_query("vaccine autism", ["cdc.gov"], 5) == "vaccine autism site:cdc.gov"


def test_site_query_joins_sites_with_or_up_to_max_sites() -> None:
    q = site_query("vaccine autism", ["cdc.gov", "who.int", "nhs.uk"], 2)
    assert q == "vaccine autism (site:cdc.gov OR site:who.int)"


def test_site_query_with_zero_max_sites_adds_nothing() -> None:
    assert site_query("vaccine autism", ["cdc.gov"], 0) == "vaccine autism"


def test_site_query_drops_sites_to_fit_word_limit() -> None:
    query = " ".join(f"w{i}" for i in range(25))  # 25 words
    q = site_query(query, ["a.org", "b.org", "c.org", "d.org"], 4, max_words=30)
    # 25 + 3 sites + 2 ORs = 30 words; a fourth site would make 32.
    assert q == query + " (site:a.org OR site:b.org OR site:c.org)"
    assert len(q.split()) <= 30


def test_site_query_returns_bare_query_when_no_site_fits() -> None:
    query = " ".join(f"w{i}" for i in range(32))
    assert site_query(query, ["a.org"], 5, max_words=32) == query


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2019-03-04T22:00:00Z", datetime(2019, 3, 4, 22, tzinfo=UTC)),
        ("2019-03-05T17:00:00-05:00", datetime(2019, 3, 5, 22, tzinfo=UTC)),
        ("2019-03-04T22:00:00", datetime(2019, 3, 4, 22, tzinfo=UTC)),
        ("2019-03-04", datetime(2019, 3, 4, tzinfo=UTC)),
        ("Mar 4, 2019", datetime(2019, 3, 4, tzinfo=UTC)),
        ("March 4, 2019", datetime(2019, 3, 4, tzinfo=UTC)),
        ("4 March 2019", datetime(2019, 3, 4, tzinfo=UTC)),
        ("Mon, 04 Mar 2019 22:00:00 GMT", datetime(2019, 3, 4, 22, tzinfo=UTC)),
    ],
)
def test_parse_published_gives_aware_utc(raw: str, expected: datetime) -> None:
    parsed = parse_published(raw)
    assert parsed == expected
    assert parsed is not None and parsed.utcoffset() is not None
    assert parsed.tzinfo == UTC


@pytest.mark.parametrize(
    "raw", ["3 days ago", "2 hours ago", "yesterday", "", "   ", "not a date", None, 1551736800]
)
def test_parse_published_gives_none_for_relative_absent_or_unknown(raw: object) -> None:
    assert parse_published(raw) is None
