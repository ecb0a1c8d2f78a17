"""The memory-retrieval benchmark runs end to end at a small size and reports its numbers
(no timing asserted); the HealthVer eval-file builder keeps only claims whose labels agree."""

from __future__ import annotations

import json
from pathlib import Path

from bench import eval_posts_data, memory_retrieval
from pipeline.learning.memory import Phase


def test_the_benchmark_items_cover_every_phase_and_are_distinct() -> None:
    items = memory_retrieval.build_items(["vitamin d prevents covid", "masks reduce spread"], 6)
    assert {i.phase for i in items} == set(Phase)
    assert len({i.trigger for i in items}) == 6


def test_the_eval_file_keeps_claims_whose_labels_agree(tmp_path: Path) -> None:
    data = tmp_path / "hv.csv"
    data.write_text(
        "id,evidence,claim,label,topic_ip,question\n"
        "1,e,Masks work,Supports,1,q\n"
        "2,e,Masks work,Supports,1,q\n"
        "3,e,Zinc cures covid,Refutes,2,q\n"
        "4,e,Zinc cures covid,Supports,2,q\n"
        "5,e,Garlic helps,Neutral,3,q\n"
    )
    out = tmp_path / "posts.jsonl"
    assert eval_posts_data.main([str(out), "--data", str(data)]) == 0
    rows = sorted((r["text"], r["gold"]) for r in map(json.loads, out.read_text().splitlines()))
    assert rows == [("Garlic helps", "not_enough_evidence"), ("Masks work", "supported")]
