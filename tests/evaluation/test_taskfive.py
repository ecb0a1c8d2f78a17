"""Task 5 reader, TREC run writer and the pure-Python scorer, on a hand-made three-rumor file
whose scores were computed by hand (below), plus sanity checks on the real dev files."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest

from evaluation.taskfive import (
    TaskFiveFormatError,
    account_handle,
    average_precision,
    macro_f1,
    parse_rumor,
    read_qrels,
    read_rumors,
    read_run,
    recall_at,
    retrieval_scores,
    snowflake_time,
    verdict_scores,
    write_run,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "taskfive"
DATA = FIXTURES / "three_rumors.jsonl"
QRELS = FIXTURES / "three_rumors_qrels.txt"

# Ids in the fixture end in two digits: rumor number, then position; "…11" and "…12" are the
# gold evidence of T5_001, "…21" that of T5_002. T5_003 is NOT ENOUGH INFO (no qrels lines).
ID = "17000000000000000"


def t(suffix: str) -> str:
    return ID + suffix


# A run made by hand.
RUN = {
    "T5_001": [t("13"), t("11"), t("14"), t("12"), t("15")],
    "T5_002": [t("22"), t("23"), t("24"), t("25"), t("26"), t("21")],
    "T5_003": [t("31")],
}
# By hand:
#   T5_001: relevant {11, 12} at ranks 2 and 4.
#           AP = (1/2 + 2/4) / 2 = (0.5 + 0.5) / 2 = 0.5;  R@5 = 2/2 = 1.
#   T5_002: relevant {21} at rank 6 (outside the first five).
#           AP = (1/6) / 1 = 0.1667;  R@5 = 0/1 = 0.
#   T5_003: not in the qrels, so not averaged (whatever the run holds for it).
#   MAP = (0.5 + 0.1667) / 2 = 0.3333;  R@5 = (1 + 0) / 2 = 0.5.
#   Without T5_002 in the run it counts as 0: MAP = (0.5 + 0) / 2 = 0.25, R@5 = 0.5.


def test_reader_keeps_rumors_labels_timelines_and_evidence() -> None:
    rumors = read_rumors(DATA)
    assert [r.id for r in rumors] == ["T5_001", "T5_002", "T5_003"]
    first = rumors[0]
    assert first.label == "REFUTES"
    assert len(first.timeline) == 5
    assert [e.post_id for e in first.evidence] == [t("11"), t("12")]
    # The account URL with a stray space still names the account.
    assert first.timeline[2].account_url == "https://twitter.com/MuseumDemo"
    assert first.timeline[2].handle == "museumdemo"
    assert rumors[2].label == "NOT ENOUGH INFO" and rumors[2].evidence == []


def test_qrels_hold_only_the_rumors_with_evidence() -> None:
    assert read_qrels(QRELS) == {"T5_001": {t("11"), t("12")}, "T5_002": {t("21")}}


def test_hand_computed_map_and_recall_at_5() -> None:
    scores = retrieval_scores(RUN, read_qrels(QRELS))
    assert scores.rumors == 2
    assert scores.per_rumor["T5_001"] == pytest.approx((0.5, 1.0))
    assert scores.per_rumor["T5_002"] == pytest.approx((1 / 6, 0.0))
    assert scores.map == pytest.approx(1 / 3)
    assert scores.recall_at_5 == pytest.approx(0.5)


def test_a_rumor_of_the_qrels_missing_from_the_run_counts_as_zero() -> None:
    run = {k: v for k, v in RUN.items() if k != "T5_002"}
    scores = retrieval_scores(run, read_qrels(QRELS))
    assert scores.rumors == 2
    assert scores.map == pytest.approx(0.25)
    assert scores.recall_at_5 == pytest.approx(0.5)


def test_average_precision_and_recall_edge_cases() -> None:
    assert average_precision(["a", "b"], set()) == 0.0
    assert average_precision(["a", "a", "b"], {"a"}) == 1.0  # a repeated id counts once
    assert recall_at(["x", "y", "z", "w", "v", "a"], {"a", "b"}, 5) == 0.0
    assert recall_at(["a"], {"a", "b"}, 5) == 0.5


def test_trec_run_round_trips() -> None:
    out = io.StringIO()
    write_run(out, {"T5_001": [(t("13"), 0.91), (t("11"), 0.5)]}, tag="demo")
    lines = out.getvalue().splitlines()
    assert lines == [f"T5_001 Q0 {t('13')} 1 0.910000 demo", f"T5_001 Q0 {t('11')} 2 0.500000 demo"]
    with pytest.raises(ValueError):
        write_run(out, {}, tag="two words")


def test_run_files_are_read_in_rank_order(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text(f"T5_001 Q0 {t('11')} 2 0.4 x\nT5_001 Q0 {t('13')} 1 0.9 x\n")
    assert read_run(path) == {"T5_001": [t("13"), t("11")]}
    path.write_text("T5_001 Q0 only-five 1 0.9\n")
    with pytest.raises(TaskFiveFormatError, match=":1:"):
        read_run(path)


def test_hand_computed_macro_f1_and_strict_macro_f1() -> None:
    rumors = read_rumors(DATA)
    retrieved = {k: v[:5] for k, v in RUN.items()}
    right = {"T5_001": "REFUTES", "T5_002": "SUPPORTS", "T5_003": "NOT ENOUGH INFO"}
    scores = verdict_scores(rumors, right, retrieved)
    # All three labels right: Macro-F1 = 1. Strict: T5_002's five retrieved tweets miss its
    # evidence, so SUPPORTS has tp 0, fn 1 -> F1 0; REFUTES and NEI stay 1: (1 + 0 + 1) / 3.
    assert scores.macro_f1 == pytest.approx(1.0)
    assert scores.strict_macro_f1 == pytest.approx(2 / 3)
    # T5_003 called REFUTES: REFUTES tp 1, fp 1 -> 2/3; NEI tp 0, fn 1 -> 0; SUPPORTS 1.
    wrong = {**right, "T5_003": "REFUTES"}
    assert verdict_scores(rumors, wrong, retrieved).macro_f1 == pytest.approx((2 / 3 + 1) / 3)


def test_macro_f1_rejects_lists_of_different_length() -> None:
    with pytest.raises(ValueError):
        macro_f1(["REFUTES"], [])


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("not json", "not JSON"),
        ('{"id": "x", "rumor": "r"}', "missing 'timeline'"),
        ('{"id": "x", "rumor": "r", "timeline": [["a", "1"]]}', "timeline entry"),
        ('{"id": "x", "rumor": "r", "timeline": [], "label": "MAYBE"}', "unknown label"),
    ],
)
def test_malformed_lines_name_the_problem(line: str, problem: str) -> None:
    with pytest.raises(TaskFiveFormatError, match=problem):
        parse_rumor(line, "file:7")


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested deeper than 64 levels"),
        ('{"id": "x", "rumor": ' + "9" * 5000 + ', "timeline": []}', "unreadable JSON"),
    ],
)
def test_hostile_lines_are_format_errors_not_crashes(line: str, problem: str) -> None:
    with pytest.raises(TaskFiveFormatError, match=problem):
        parse_rumor(line, "file:1")


@pytest.mark.parametrize("reader", [read_rumors, read_qrels, read_run])
def test_files_that_are_not_utf8_are_format_errors(reader: object, tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("T5_001 0 123 1\nT5_002 0 caf\xe9 1\n".encode("latin-1"))
    with pytest.raises(TaskFiveFormatError, match="not UTF-8 text"):
        reader(path)  # type: ignore[operator]


def test_malformed_qrels_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("T5_001 0 123 1\nT5_001 0 124\n")
    with pytest.raises(TaskFiveFormatError, match=":2:"):
        read_qrels(path)


def test_tweet_ids_carry_their_time_and_urls_their_handle() -> None:
    # 1555986659279360001 >> 22 = 370,976,128,406 ms after the Twitter epoch (1,288,834,974,657
    # ms): 1,659,811,103,063 ms = 2022-08-06 00:00 UTC (1,659,744,000 s) + 67,103.063 s.
    assert snowflake_time("1555986659279360001") == datetime(
        2022, 8, 6, 18, 38, 23, 63000, tzinfo=UTC
    )
    assert snowflake_time("12345") is None
    assert snowflake_time("abc") is None
    # Digits to str.isdigit that int() refuses, and ids past 64 bits or any time_t.
    assert snowflake_time("1555986659279360001²") is None
    assert snowflake_time("١٥٥٥٩٨٦٦٥٩٢٧٩٣٦٠٠٠١") is None
    assert snowflake_time("9" * 100) is None
    assert snowflake_time("9" * 5000) is None
    assert account_handle(" https://twitter.com/LBpresidency ") == "lbpresidency"


def test_dev_files_are_consistent(shared_data: Path) -> None:
    folder = shared_data / "checkthat2024_task5_en"
    rumors = read_rumors(folder / "English_dev.jsonl")
    qrels = read_qrels(folder / "English_dev_qrels.txt")
    assert len(rumors) == 32
    labelled = {r.id for r in rumors if r.label in ("SUPPORTS", "REFUTES")}
    assert set(qrels) == labelled  # NOT ENOUGH INFO rumors have no qrels lines
    by_id = {r.id: r for r in rumors}
    for rumor_id, relevant in qrels.items():
        timeline = {e.post_id for e in by_id[rumor_id].timeline}
        assert relevant <= timeline
        assert relevant == {e.post_id for e in by_id[rumor_id].evidence}
