"""The real-data claim benchmarks on a tiny collection written here, in the CheckThat! 2022
Task 2A shapes (its README: vclaims.jsonl with vclaim_id / vclaim / date, queries
`id<TAB>text`, qrels `id 0 vclaim_id 1`): they run the shipped path end to end and report
every number they promise. No figure is asserted beyond what the tiny data fixes."""

from __future__ import annotations

import json
import random
from pathlib import Path

from bench import claim_checkthat, claim_reversals

CLAIMS = {
    "vclaim-sno-carrots": ("Eating carrots lets you see in the dark.", "2 May 2019"),
    "vclaim-sno-wall": ("The Great Wall of China is visible from the Moon.", "1 June 2018"),
    "vclaim-sno-bananas": ("Bananas will be extinct within ten years.", "3 June 2020"),
    "vclaim-sno-sharks": ("Sharks cannot get cancer.", "1 January 2018"),
    "vclaim-sno-goldfish": ("Goldfish have a three-second memory.", "9 April 2016"),
    "vclaim-sno-obama": ("Barack Obama banned the pledge of allegiance in schools.", "5 May 2016"),
}
TWEETS = {
    "t1": ("carrots give you night vision — Ann Bee (@annbee) May 3, 2019", "vclaim-sno-carrots"),
    "t2": ("You can see the Great Wall of China from the moon!", "vclaim-sno-wall"),
    "t3": ("bananas are going extinct in 10 years", "vclaim-sno-bananas"),
    "t4": ("sharks never get cancer, true story", "vclaim-sno-sharks"),
    "t5": ("my goldfish only remembers 3 seconds", "vclaim-sno-goldfish"),
    "t6": ("Obama banned the pledge of allegiance", "vclaim-sno-obama"),
}


# Review titles (the collection's `title`) for some claims, as Snopes writes them.
TITLES = {"vclaim-sno-carrots": "Carrots and Night Vision", "vclaim-sno-sharks": "Shark Cancer?"}


def _write(folder: Path) -> None:
    folder.mkdir()
    (folder / "vclaims.jsonl").write_text(
        "".join(
            json.dumps({"vclaim_id": i, "vclaim": c, "date": d, "title": TITLES.get(i, "")}) + "\n"
            for i, (c, d) in CLAIMS.items()
        )
    )
    (folder / "train_dev_queries.tsv").write_text(
        "".join(f"{q}\t{t}\n" for q, (t, _) in TWEETS.items())
    )
    (folder / "train_qrels.tsv").write_text(
        "".join(f"{q} 0 {v} 1\n" for q, (_, v) in list(TWEETS.items())[:5])
    )
    (folder / "dev_qrels.tsv").write_text("t6 0 vclaim-sno-obama 1\n")


def test_the_checkthat_bench_reports_ranking_age_fusion_latency_and_reversals(
    tmp_path: Path,
) -> None:
    _write(tmp_path / "data")
    numbers = claim_checkthat.run(log=lambda _: None, data=tmp_path / "data")
    for key in ("map_at_5", "top1", "recall_at_5", "strong_share", "strong_precision"):
        assert 0.0 <= numbers[f"train_{key}"] <= 1.0 and 0.0 <= numbers[f"dev_{key}"] <= 1.0
    assert numbers["import_per_s"] > 0 and numbers["match_p95_ms"] > 0
    assert numbers["cv_chosen_bm25_weight"] in claim_checkthat.BM25_GRID
    assert numbers["title_cv_chosen_weight"] in claim_checkthat.TITLE_GRID
    assert 0.0 <= numbers["title_cv_w0.7_strong_precision"] <= 1.0
    # Every claim held out and asked by its claim, and by its title where it has one.
    assert numbers["held_out_queries"] == len(CLAIMS) + len(TITLES)
    assert 0 <= numbers["held_out_strong_titles"] <= numbers["held_out_queries"]
    assert numbers["age_pairs"] <= 5 and numbers["not_imported"] == 0
    assert numbers["reversal_exact_n"] == 5 and "reversal_negation_strong" in numbers


def test_reversals_change_what_they_say_and_restatements_keep_it() -> None:
    rng = random.Random(0)
    claim = "The minister said the vaccine is safe for 12 children."
    assert claim_reversals.negated(claim, rng) == (
        "The minister said the vaccine is not safe for 12 children."
    )
    assert claim_reversals.number_changed(claim, rng) == (
        "The minister said the vaccine is safe for 25 children."
    )
    twice = claim_reversals.negated("He did not say the vaccine is safe.", rng)
    assert twice == "He did not say the vaccine is not safe."
    restated = claim_reversals.restated("I’ll pay", rng)
    assert restated is not None and restated.startswith("I'll pay pic.twitter.com/")
    swapped = claim_reversals.antonym_swapped(claim, rng)
    assert swapped is not None and swapped != claim
