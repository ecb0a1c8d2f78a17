"""The authority evaluation's scoring and its timeline conversion, on the hand-made three-rumor
file of tests/fixtures/taskfive (its scores are worked out in test_taskfive.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from evaluation.authority import RumorResult, authority_report, statements_of
from evaluation.taskfive import TaskFiveFormatError, read_qrels, read_rumors, snowflake_time
from pipeline.config import AuthorityConfig

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "taskfive"
ID = "17000000000000000"


def t(suffix: str) -> str:
    return ID + suffix


def results(labelled: bool) -> list[RumorResult]:
    # T5_001 finds its evidence (11, 12) at ranks 2 and 4: AP 0.5, R@5 1. T5_002 misses its
    # evidence (21): AP 0, R@5 0. T5_003 has no qrels. MAP 0.25, R@5 0.5.
    ranked = {
        "T5_001": [t("13"), t("11"), t("14"), t("12"), t("15")],
        "T5_002": [t("22"), t("23"), t("24"), t("25"), t("26")],
        "T5_003": [t("31")],
    }
    labels = {"T5_001": "REFUTES", "T5_002": "SUPPORTS", "T5_003": "NOT ENOUGH INFO"}
    return [
        RumorResult(
            rumor_id,
            [(doc, 1.0 / rank) for rank, doc in enumerate(docs, start=1)],
            label=labels[rumor_id] if labelled else None,
        )
        for rumor_id, docs in ranked.items()
    ]


def test_report_prints_map_and_recall_and_leaves_out_f1_without_verdicts() -> None:
    rumors = read_rumors(FIXTURES / "three_rumors.jsonl")
    gold = read_qrels(FIXTURES / "three_rumors_qrels.txt")
    report = authority_report(rumors, gold, results(False), AuthorityConfig(), k=5, judged=False)
    assert report.lines == ["MAP 0.250", "R@5 0.500"]
    assert report.payload["rumors_scored"] == 2
    assert report.payload["rumors_retrieved"] == 3
    assert report.payload["per_rumor"]["T5_001"] == {"ap": 0.5, "r@5": 1.0}
    assert "macro_f1" not in report.payload


def test_judged_report_adds_macro_f1_and_strict_macro_f1() -> None:
    rumors = read_rumors(FIXTURES / "three_rumors.jsonl")
    gold = read_qrels(FIXTURES / "three_rumors_qrels.txt")
    report = authority_report(rumors, gold, results(True), AuthorityConfig(), k=5, judged=True)
    # Every label is right (Macro-F1 1), but T5_002's SUPPORTS comes without its evidence, so
    # strict scoring counts it wrong: (1 + 0 + 1) / 3.
    assert report.lines[2:] == ["Macro-F1 1.000", "Strict-Macro-F1 0.667"]
    assert report.payload["strict_macro_f1"] == pytest.approx(0.6667)
    assert report.payload["predictions"]["T5_002"] == {"label": "SUPPORTS", "vote": None}


def test_timeline_entries_become_statements_timed_by_their_tweet_id() -> None:
    [rumor, *_] = read_rumors(FIXTURES / "three_rumors.jsonl")
    statements = statements_of(rumor)
    assert [s.post_id for s in statements] == [e.post_id for e in rumor.timeline]
    first = statements[0]
    assert first.created_at == snowflake_time(first.post_id)
    assert first.account == rumor.timeline[0].handle
    assert first.post_id in first.url and first.account in first.url


def test_a_timeline_id_that_is_not_a_snowflake_is_a_format_error() -> None:
    [rumor, *_] = read_rumors(FIXTURES / "three_rumors.jsonl")
    entry = replace(rumor.timeline[0], post_id="not-a-number")
    with pytest.raises(TaskFiveFormatError, match="not a snowflake"):
        statements_of(replace(rumor, timeline=[entry]))
