"""Publisher table coverage and ordering, measured against MUSE's tier lists.

The bundled table (`pipeline/data/publishers.csv`) and the class rules were written without
MUSE's lists, so those lists are an outside reference: every domain (or domain/path) on them is
rated by the default table alone, with no MUSE layer, and we report

* coverage: the share that gets any rating (High, Medium, Low or Excluded, not Unknown),
  overall and per MUSE list;
* ordering: ROC AUC of our tier (High 3 > Medium 2 > Low 1 > Excluded 0) as a score for
  "on MUSE's High list" against "on MUSE's Low list", and for High or Medium against Low, over
  the keys both rate; ties count half;
* agreement: the share of keys both rate where our tier is MUSE's.

MUSE's lists are read from `FACTNOTE_MUSE_DIR` or `../shared/data/muse_publisher_tiers` next to
the repository; they are evaluation data and never copied into the repository.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from sklearn.metrics import roc_auc_score

from pipeline.credibility import MUSE_FILES, PublisherTable
from pipeline.domains import parse_host
from pipeline.records import Tier

DEFAULT_MUSE_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "muse_publisher_tiers"
SCORE = {Tier.HIGH: 3, Tier.MEDIUM: 2, Tier.LOW: 1, Tier.EXCLUDED: 0}


def muse_lists(folder: Path) -> dict[Tier, list[str]]:
    """MUSE's keys per tier, as written (lines naming no host are left out, as on import)."""
    lists: dict[Tier, list[str]] = {}
    for name, tier in MUSE_FILES:
        lines = (folder / name).read_text(encoding="utf-8-sig").splitlines()
        keys = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
        lists[tier] = [k for k in keys if parse_host(k).host and "." in parse_host(k).host]
    return lists


def _auc(table: PublisherTable, positives: list[str], negatives: list[str]) -> float:
    scores: list[int] = []
    labels: list[int] = []
    for label, keys in ((1, positives), (0, negatives)):
        for key in keys:
            tier = table.lookup(key).tier
            if tier in SCORE:
                scores.append(SCORE[tier])
                labels.append(label)
    if len(set(labels)) < 2:
        return float("nan")
    return float(roc_auc_score(labels, scores))


def measure(table: PublisherTable, lists: dict[Tier, list[str]]) -> dict[str, float]:
    numbers: dict[str, float] = {}
    rated_all = total = agree = 0
    for tier, keys in lists.items():
        tiers = [table.lookup(key).tier for key in keys]
        rated = [t for t in tiers if t is not Tier.UNKNOWN]
        numbers[f"coverage_muse_{tier.value}"] = len(rated) / len(keys) if keys else 0.0
        rated_all += len(rated)
        total += len(keys)
        agree += sum(1 for t in rated if t is tier)
    numbers["coverage_muse_all"] = rated_all / total if total else 0.0
    numbers["agreement_where_rated"] = agree / rated_all if rated_all else 0.0
    high, medium, low = lists[Tier.HIGH], lists[Tier.MEDIUM], lists[Tier.LOW]
    numbers["auc_high_vs_low"] = _auc(table, high, low)
    numbers["auc_high_medium_vs_low"] = _auc(table, high + medium, low)
    numbers["keys"] = float(total)
    return numbers


def run(log: Callable[[str], None] = print, muse_dir: Path | None = None) -> dict[str, float]:
    folder = muse_dir or Path(os.environ.get("FACTNOTE_MUSE_DIR", DEFAULT_MUSE_DIR))
    if not folder.is_dir():
        raise FileNotFoundError(f"MUSE tier lists not found at {folder} (set FACTNOTE_MUSE_DIR)")
    lists = muse_lists(folder)
    log(f"MUSE lists from {folder}: " + ", ".join(f"{t.value} {len(k)}" for t, k in lists.items()))
    numbers = measure(PublisherTable.default(), lists)
    for key, value in numbers.items():
        log(f"{key}: {value:.4f}")
    return numbers


if __name__ == "__main__":
    run()
