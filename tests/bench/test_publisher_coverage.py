"""The publisher-coverage benchmark reads MUSE-style lists and reports coverage and ordering."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import publisher_coverage
from pipeline.records import Tier
from pipeline.sources.credibility import PublisherTable

MUSE_FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "credibility" / "muse"


def test_lists_leave_out_lines_that_name_no_domain() -> None:
    keys = [key for keys in publisher_coverage.muse_lists(MUSE_FIXTURE).values() for key in keys]
    assert "not a domain" not in keys
    assert "WWW.Spaced-Out.com" in keys and "science.org/journal/sciadv" in keys


def test_measure_reports_coverage_per_list_and_ordering() -> None:
    table = PublisherTable()
    table.add_entry("good.example", Tier.HIGH, "test", "test")
    table.add_entry("fair.example", Tier.MEDIUM, "test", "test")
    table.add_entry("poor.example", Tier.LOW, "test", "test")
    lists = {
        Tier.HIGH: ["good.example", "unlisted-a.example"],
        Tier.MEDIUM: ["fair.example"],
        Tier.LOW: ["poor.example", "unlisted-b.example"],
    }
    numbers = publisher_coverage.measure(table, lists)
    assert numbers["coverage_muse_high"] == pytest.approx(0.5)
    assert numbers["coverage_muse_all"] == pytest.approx(3 / 5)
    assert numbers["agreement_where_rated"] == pytest.approx(1.0)
    assert numbers["auc_high_vs_low"] == pytest.approx(1.0)
    assert numbers["auc_high_medium_vs_low"] == pytest.approx(1.0)
    assert numbers["keys"] == 5


def test_reversed_table_orders_backwards() -> None:
    table = PublisherTable()
    table.add_entry("good.example", Tier.LOW, "test", "test")
    table.add_entry("poor.example", Tier.HIGH, "test", "test")
    lists = {Tier.HIGH: ["good.example"], Tier.MEDIUM: [], Tier.LOW: ["poor.example"]}
    assert publisher_coverage.measure(table, lists)["auc_high_vs_low"] == pytest.approx(0.0)


def test_notes_coverage_counts_links_and_domains_leaving_out_wikis_platforms_and_archives() -> None:
    table = PublisherTable()
    table.add_entry("good.example", Tier.HIGH, "test", "test")
    notes = [
        ("1", "See https://good.example/a and https://unlisted.example/b"),
        # Wikipedia, a social network, a shortener and a bare archive item are left out; an
        # archived copy counts as the page it copies.
        (
            "2",
            "https://en.wikipedia.org/wiki/X https://x.com/a/status/1 https://bit.ly/abc "
            "https://archive.org/details/item https://web.archive.org/web/2020/https://good.example/c",
        ),
    ]
    numbers = publisher_coverage.notes_coverage(table, notes)
    assert numbers["links"] == 3 and numbers["link_coverage"] == pytest.approx(2 / 3)
    assert numbers["domains"] == 2 and numbers["domain_coverage"] == pytest.approx(0.5)


def test_notes_are_split_into_two_fixed_halves() -> None:
    halves = [publisher_coverage.note_half(str(n)) for n in range(200)]
    assert halves == [publisher_coverage.note_half(str(n)) for n in range(200)]
    assert 80 < halves.count("tune") < 120


def test_notes_coverage_leaves_out_wikimedia_wikis_copy_archives_and_their_shortener() -> None:
    table = PublisherTable()
    table.add_entry("good.example", Tier.HIGH, "test", "test")
    notes = [
        (
            "1",
            "https://good.example/a https://tr.m.wikiquote.org/wiki/X "
            "https://perma.cc/ABCD-1234 https://ghostarchive.org/archive/abc https://w.wiki/Abc1",
        )
    ]
    numbers = publisher_coverage.notes_coverage(table, notes)
    assert numbers["links"] == 1 and numbers["link_coverage"] == pytest.approx(1.0)
