"""Publisher credibility: the MUSE, MBFC and score importers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.records import Tier
from pipeline.sources import credibility
from pipeline.sources.credibility import (
    CredibilityDataError,
    PublisherTable,
)
from tests.pipeline.sources.credibility.helpers import (
    MBFC_FIXTURE,
    MUSE_FIXTURE,
    SCORE_FIXTURE,
)

MUSE_REAL = Path(__file__).resolve().parents[5] / "shared" / "data" / "muse_publisher_tiers"

needs_muse_data = pytest.mark.skipif(
    not MUSE_REAL.is_dir(), reason=f"MUSE tier lists not present at {MUSE_REAL}"
)


def looked_up(
    table: PublisherTable, source: str, expected: dict[Tier, list[str]]
) -> dict[Tier, list[str]]:
    """The domains of `expected` grouped by the tier `table.lookup` gives them, each checked to
    come from the importer `source`."""
    found: dict[Tier, list[str]] = {}
    for domain in (d for domains in expected.values() for d in domains):
        rating = table.lookup(domain)
        assert rating.source == source, domain
        found.setdefault(rating.tier, []).append(domain)
    return found


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
        Tier.HIGH: ["veryhigh-least.com", "veryhigh-proscience.org"],
        Tier.MEDIUM: ["veryhigh-leftcenter.com", "high-rightcenter.com", "reuters.com"],
        Tier.LOW: ["mostly-least.com"],
        Tier.EXCLUDED: [
            "mixed-least.com",
            "high-left.com",
            "veryhigh-satire.com",
            "low-conspiracy.com",
            "verylow-questionable.com",
        ],
    }
    assert looked_up(table, "mbfc", expected) == expected
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
        Tier.HIGH: ["top.com", "edge-high.com"],
        Tier.MEDIUM: ["just-below-high.com", "edge-medium.com"],
        Tier.LOW: ["middling.com", "edge-low.com"],
        Tier.EXCLUDED: ["poor.com", "zero.com"],
    }
    assert looked_up(table, "score", expected) == expected
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
