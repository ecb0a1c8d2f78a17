"""`factnote eval authority | claims` via typer's runner, with the real retriever and model on
a hand-made Task 5 file, and a scripted OpenAI-compatible server for the verdicts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from typer.testing import CliRunner

from bot.commands.evaluate import app
from evaluation.taskfive import read_qrels, read_run, retrieval_scores
from testing.fakes.openai_server import FakeLLM, Reply

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "taskfive"
DATA = FIXTURES / "three_rumors.jsonl"
QRELS = FIXTURES / "three_rumors_qrels.txt"

runner = CliRunner()


def test_authority_prints_map_and_recall_lines_and_writes_the_run(tmp_path: Path) -> None:
    run_file = tmp_path / "run.trec"
    result = runner.invoke(
        app,
        ["authority", "--data", str(DATA), "--qrels", str(QRELS), "--run-out", str(run_file)],
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert re.fullmatch(r"MAP \d\.\d{3}", lines[0]) and re.fullmatch(r"R@5 \d\.\d{3}", lines[1])
    # The printed numbers are the scorer's verdict on the run file that was written.
    run = read_run(run_file)
    assert set(run) == {"T5_001", "T5_002", "T5_003"}
    assert all(len(ids) <= 5 for ids in run.values())
    scores = retrieval_scores(run, read_qrels(QRELS))
    assert lines == [f"MAP {scores.map:.3f}", f"R@5 {scores.recall_at_5:.3f}"]
    # The statements that answer these rumors are found among the first five.
    assert lines[1] == "R@5 1.000"
    first_line = run_file.read_text().splitlines()[0].split()
    assert first_line[1] == "Q0" and first_line[3] == "1" and first_line[5] == "factnote"


def test_authority_json_output(tmp_path: Path) -> None:
    result = runner.invoke(app, ["authority", "--data", str(DATA), "--qrels", str(QRELS), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["rumors_scored"] == 2 and payload["rumors_retrieved"] == 3
    assert 0.0 <= payload["map"] <= 1.0 and payload["recall_at_5"] == 1.0
    assert "macro_f1" not in payload  # no LLM configured


def test_authority_with_an_llm_also_scores_the_verdicts(fake_llm: FakeLLM) -> None:
    def stance(body: dict[str, Any]) -> Reply:
        text = body["messages"][-1]["content"]
        if "did not burn down" in text or "minor fire" in text:
            return Reply.json({"stance": "refutes", "confidence": 0.9})
        if "marathon will take place" in text:
            return Reply.json({"stance": "supports", "confidence": 0.8})
        return Reply.json({"stance": "not_enough_info", "confidence": 0.6})

    fake_llm.script("authority_stance", stance)
    result = runner.invoke(
        app,
        ["authority", "--data", str(DATA), "--qrels", str(QRELS), "--json"],
        obj=SimpleNamespace(llm=fake_llm.config()),
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["predictions"]["T5_001"]["label"] == "REFUTES"
    assert payload["predictions"]["T5_002"]["label"] == "SUPPORTS"
    assert payload["predictions"]["T5_003"]["label"] == "NOT ENOUGH INFO"
    assert payload["macro_f1"] == 1.0 and payload["strict_macro_f1"] == 1.0
    # Up to five statements per rumor were judged, one call each.
    assert fake_llm.calls("authority_stance") == 5 + 5 + 3

    text = runner.invoke(
        app,
        ["authority", "--data", str(DATA), "--qrels", str(QRELS)],
        obj=SimpleNamespace(llm=fake_llm.config()),
    )
    assert text.stdout.splitlines()[2:] == ["Macro-F1 1.000", "Strict-Macro-F1 1.000"]


def test_authority_reports_unreadable_data(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    result = runner.invoke(app, ["authority", "--data", str(bad), "--qrels", str(QRELS)])
    assert result.exit_code == 2
    assert "missing 'rumor'" in result.stderr


def test_authority_reports_hostile_data_without_a_traceback(tmp_path: Path) -> None:
    not_utf8 = tmp_path / "latin1.jsonl"
    not_utf8.write_bytes('{"id": "x", "rumor": "caf\xe9", "timeline": []}\n'.encode("latin-1"))
    bad_id = tmp_path / "bad_id.jsonl"
    entry = ["https://twitter.com/someone", "1555986659279360001²", "text"]
    bad_id.write_text(json.dumps({"id": "x", "rumor": "r", "timeline": [entry]}) + "\n")
    for data, problem in ((not_utf8, "not UTF-8 text"), (bad_id, "is not a snowflake")):
        result = runner.invoke(app, ["authority", "--data", str(data), "--qrels", str(QRELS)])
        assert result.exit_code == 2, result.output
        assert problem in result.stderr
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_claims_reports_precision_and_recall_at_both_thresholds(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        json.dumps({"rumor_id": "T5_002", "text": "Heat forces the city marathon into October."})
        + "\n"
        + json.dumps({"text": "Penguins can fly across the Atlantic."})
        + "\n"
    )
    result = runner.invoke(app, ["claims", "--rumors", str(DATA), "--data", str(cases), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["positives"], report["negatives"]) == (1, 1)
    weak = report["weak"]
    assert weak["recall"] == 1.0 and weak["precision"] == 1.0
    lowest = report["sweep"][0]
    assert lowest["threshold"] == 0.3 and lowest["correct"] == 1

    table = runner.invoke(app, ["claims", "--rumors", str(DATA), "--data", str(cases)])
    assert table.exit_code == 0
    assert "1 paraphrases, 1 negatives" in table.stdout
    assert re.search(r"weak >= 0\.\d{3}: precision 1\.000 recall 1\.000", table.stdout)


def test_claims_reports_a_deeply_nested_case_line_as_unreadable(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    result = runner.invoke(app, ["claims", "--rumors", str(DATA), "--data", str(cases)])
    assert result.exit_code == 2, result.output
    assert "nested deeper than 64 levels" in result.stderr


# A collection in the CheckThat! 2022 Task 2A shapes (the task's README: vclaims.jsonl lines with
# vclaim_id / vclaim / title / date, queries `id<TAB>text`, qrels `id 0 vclaim_id 1`), written
# here: five fact-checks on different topics, three queries that repeat one each.
VCLAIMS = [
    ("vclaim-sno-carrots-night-vision", "Eating carrots lets you see in the dark.", "2 May 2019"),
    ("vclaim-sno-great-wall-moon", "The Great Wall of China is visible from the Moon.", ""),
    ("vclaim-sno-bananas-extinct", "Bananas will be extinct within ten years.", "3 June 2020"),
    ("vclaim-sno-sharks-cancer", "Sharks cannot get cancer.", "1 January 2018"),
    ("vclaim-sno-goldfish-memory", "Goldfish have a three-second memory.", "9 April 2016"),
]
QUERIES = [
    ("q1", "carrots give you night vision, eat them and see in the dark"),
    ("q2", "You can see the Great Wall of China from the moon!"),
    ("q3", "My goldfish only remembers things for three seconds"),
    ("q-unjudged", "this query has no qrels and is left out"),
]
GOLD = [("q1", "vclaim-sno-carrots-night-vision"), ("q2", "vclaim-sno-great-wall-moon")]
GOLD += [("q3", "vclaim-sno-goldfish-memory")]


def _checkthat_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    collection, queries, qrels = (tmp_path / n for n in ("vc.jsonl", "q.tsv", "qrels.tsv"))
    collection.write_text(
        "".join(
            json.dumps({"vclaim_id": i, "vclaim": c, "title": c, "date": d}) + "\n"
            for i, c, d in VCLAIMS
        )
    )
    queries.write_text("".join(f"{q}\t{t}\n" for q, t in QUERIES))
    qrels.write_text("".join(f"{q} 0 {v} 1\n" for q, v in GOLD))
    return collection, queries, qrels


def test_claims_on_a_collection_prints_map_top1_recall_and_strong_figures(tmp_path: Path) -> None:
    collection, queries, qrels = _checkthat_files(tmp_path)
    args = ["--collection", str(collection), "--queries", str(queries), "--qrels", str(qrels)]
    result = runner.invoke(app, ["claims", *args, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["queries"] == 3  # the unjudged query is not scored
    assert report["map_at_5"] == 1.0 and report["top1"] == 1.0 and report["recall_at_5"] == 1.0
    assert report["strong_precision"] == 1.0
    assert report["strong"] == round(report["strong_share"] * 3)

    lines = runner.invoke(app, ["claims", *args]).stdout
    for label in ("MAP@5 1.000", "top-1 1.000", "R@5 1.000", "strong share", "precision of strong"):
        assert label in lines


def test_claims_on_a_collection_scores_a_wrong_gold_as_a_miss(tmp_path: Path) -> None:
    collection, queries, qrels = _checkthat_files(tmp_path)
    qrels.write_text("q1 0 vclaim-sno-sharks-cancer 1\n")
    args = ["--collection", str(collection), "--queries", str(queries), "--qrels", str(qrels)]
    report = json.loads(runner.invoke(app, ["claims", *args, "--json"]).stdout)
    assert report["top1"] == 0.0 and report["map_at_5"] < 0.5
    assert report["strong_right"] == 0


def test_claims_on_a_collection_needs_all_three_files_and_readable_qrels(tmp_path: Path) -> None:
    collection, queries, qrels = _checkthat_files(tmp_path)
    partial = runner.invoke(app, ["claims", "--collection", str(collection)])
    assert partial.exit_code == 2 and "go together" in partial.stderr
    qrels.write_text("q1 vclaim-sno-carrots-night-vision\n")
    args = ["--collection", str(collection), "--queries", str(queries), "--qrels", str(qrels)]
    bad = runner.invoke(app, ["claims", *args])
    assert bad.exit_code == 2 and "qrels.tsv:1: expected" in bad.stderr
