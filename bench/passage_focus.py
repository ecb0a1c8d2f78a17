"""What the extractor's focused passages (`pipeline.research.passage_focus`) keep of real evidence.

The token saving is measured by `bench.pipeline_cost` (which also compares the decisions);
this measures the risk: how much of a text known to be evidence survives the focus. Each
gold evidence text is treated as a passage and focused on its claim's words:

* CLEF 2024 Task 5 English dev: the authority tweets labelled as evidence for a rumor;
* HealthVer dev: the evidence passages of Supports and Refutes pairs.

Reported per set, with the shipped rule (a sentence sharing a word with the claim, and the
sentence after it) and without its second part ("hit_only"): the mean share of an evidence
text's sentences kept, and the share of evidence texts kept whole. Read from
`../shared/data/`, never copied.

Usage: python -m bench.passage_focus (or `make bench` for all benchmarks).
"""

from __future__ import annotations

import csv
import statistics
from collections.abc import Callable, Iterator
from pathlib import Path

from evaluation.taskfive import read_rumors
from pipeline.research.passage_focus import Focus, kept_sentences, sentences

Log = Callable[[str], None]
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
RUMORS = SHARED / "checkthat2024_task5_en" / "English_dev.jsonl"
HEALTHVER = SHARED / "healthver" / "healthver_dev.csv"


def kept_share(text: str, claim: str, *, after: bool) -> float:
    """The share of `text`'s sentences a focus on `claim` shows."""
    keep = kept_sentences(sentences(text), Focus.of([claim]).words, after=after)
    return sum(keep) / len(keep) if keep else 1.0


def clef_pairs() -> Iterator[tuple[str, str]]:
    for rumor in read_rumors(RUMORS):
        for entry in rumor.evidence:
            yield entry.text, rumor.text


def healthver_pairs() -> Iterator[tuple[str, str]]:
    with HEALTHVER.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            if row["label"] in ("Supports", "Refutes"):
                yield row["evidence"], row["claim"]


def run(log: Log = print) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, pairs in (("clef", list(clef_pairs())), ("healthver", list(healthver_pairs()))):
        out[f"{name}_evidence_texts"] = float(len(pairs))
        for rule, after in (("shipped", True), ("hit_only", False)):
            shares = [kept_share(text, claim, after=after) for text, claim in pairs]
            out[f"{name}_{rule}_sentences_kept_mean"] = statistics.fmean(shares)
            out[f"{name}_{rule}_kept_whole"] = sum(s == 1.0 for s in shares) / len(shares)
            log(
                f"{name} ({len(pairs)} evidence texts), {rule}: "
                f"{out[f'{name}_{rule}_sentences_kept_mean']:.3f} of sentences kept, "
                f"{out[f'{name}_{rule}_kept_whole']:.3f} kept whole"
            )
    return out


if __name__ == "__main__":
    run()
