"""Publisher credibility: layering tables from the config, and the search filters."""

from __future__ import annotations

from typing import Any

import pytest

from pipeline.config import CredibilityConfig
from pipeline.records import Tier
from pipeline.sources.credibility import (
    PREPRINT_DOMAINS,
    CredibilityDataError,
    PublisherTable,
)
from tests.pipeline.sources.credibility.helpers import (
    MBFC_FIXTURE,
    MUSE_FIXTURE,
    SCORE_FIXTURE,
)

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
