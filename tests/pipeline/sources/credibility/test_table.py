"""Publisher credibility: the bundled default table, CSV loading and building a table."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from pipeline.records import Tier
from pipeline.sources import credibility
from pipeline.sources.credibility import (
    TABLE_TIERS,
    CredibilityDataError,
    PublisherTable,
    load_table_csv,
)
from pipeline.web.domains import registrable_domain
from tests.pipeline.sources.credibility.helpers import (
    _table,
)

BUNDLED_CSV = Path(credibility.__file__).parents[1] / "data" / "publishers.csv"


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
