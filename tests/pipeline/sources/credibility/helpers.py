"""Shared by the publisher credibility tests: fixture paths and a small table builder."""

from __future__ import annotations

from pathlib import Path

from pipeline.records import Tier
from pipeline.sources.credibility import (
    PublisherTable,
)

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "credibility"
MUSE_FIXTURE = FIXTURES / "muse"
MBFC_FIXTURE = FIXTURES / "mbfc.csv"
SCORE_FIXTURE = FIXTURES / "scores.csv"


def _table(*entries: tuple[str, Tier]) -> PublisherTable:
    table = PublisherTable()
    for key, tier in entries:
        table.add_entry(key, tier, f"test entry {key}", "test")
    return table
