"""The publisher-coverage benchmark reads MUSE-style lists and reports coverage and ordering."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import publisher_coverage
from pipeline.credibility import PublisherTable
from pipeline.records import Tier

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
