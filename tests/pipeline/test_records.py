"""Typed outcomes: guard problems, evidence sources, skip reasons and stage failures."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from pipeline.authority.retrieval import AuthorityIndexError
from pipeline.claims.index import ClaimIndexError
from pipeline.failures import PipelineFailure
from pipeline.llm.client import LLMError, LLMTransportError
from pipeline.records import (
    Evidence,
    EvidenceSource,
    GuardReport,
    Platform,
    Problem,
    ProblemCode,
    Stance,
    Tier,
    Trace,
)
from pipeline.search.base import SearchError

STORED = {  # a guard report as decision traces have stored it since the first release
    "valid": False,
    "platform": "x",
    "length": 301,
    "limit": 280,
    "problems": ["too_long: 301 > 280", "notes_need_url", 'copies_post: "a: b"'],
    "urls": [],
}


def test_problem_reads_and_writes_code_colon_detail() -> None:
    problem = Problem(code=ProblemCode.URL_NOT_EVIDENCE, detail="evil.example/a, b.org/c")
    assert str(problem) == "url_not_evidence: evil.example/a, b.org/c"
    assert str(Problem(code=ProblemCode.EMPTY)) == "empty"
    assert Problem.model_validate(str(problem)) == problem


def test_stored_guard_reports_with_string_problems_still_load_and_store_the_same() -> None:
    report = GuardReport.model_validate(STORED)
    assert [p.code for p in report.problems] == [
        ProblemCode.TOO_LONG,
        ProblemCode.NOTES_NEED_URL,
        ProblemCode.COPIES_POST,
    ]
    assert report.problems[2].detail == '"a: b"'  # only the first colon separates the code
    assert report.model_dump(mode="json") == STORED  # the stored JSON does not change
    trace = Trace(guard=[report])
    assert Trace.model_validate_json(trace.model_dump_json()) == trace


def test_problem_with_an_unknown_code_is_refused() -> None:
    with pytest.raises(ValidationError):
        Problem.model_validate("no_such_rule: x")


def test_only_text_rules_are_rewritable() -> None:
    decision_rules = {
        ProblemCode.NO_REPLY_VERDICT,
        ProblemCode.THIN_EVIDENCE,
        ProblemCode.LOW_CONFIDENCE,
    }
    assert {c for c in ProblemCode if not c.rewritable} == decision_rules


def test_guard_report_dumps_problems_as_text_for_json_readers() -> None:
    report = GuardReport(
        valid=False,
        platform=Platform.X,
        length=1,
        limit=280,
        problems=[Problem(code=ProblemCode.ABUSIVE, detail="idiot")],
    )
    assert json.loads(report.model_dump_json())["problems"] == ["abusive: idiot"]


def test_evidence_source_is_an_enum_and_reads_stored_strings() -> None:
    item = Evidence(
        url="https://a.example/x",
        tier=Tier.HIGH,
        stance=Stance.REFUTES,
        confidence=0.9,
        quote="q",
        source="fact_check",
    )
    assert item.source is EvidenceSource.FACT_CHECK
    assert Evidence.model_validate(item.model_dump(mode="json")) == item
    assert item.model_dump(mode="json")["source"] == "fact_check"


@pytest.mark.parametrize(
    ("failure", "stage"),
    [
        (ClaimIndexError("unreadable"), "known_claims"),
        (AuthorityIndexError("unreadable"), "authority"),
        (SearchError("brave: HTTP 500"), "search"),
        (LLMError("bad", step="analyze"), "analyze"),
        (LLMTransportError("down", step="extract"), "extract"),
    ],
)
def test_stage_errors_are_pipeline_failures_naming_their_stage(
    failure: PipelineFailure, stage: str
) -> None:
    assert isinstance(failure, PipelineFailure)
    assert failure.stage == stage


def test_store_errors_stay_runtime_errors() -> None:
    assert isinstance(ClaimIndexError("x"), RuntimeError)
    assert isinstance(AuthorityIndexError("x"), RuntimeError)
