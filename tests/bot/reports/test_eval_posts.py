"""`factnote eval posts`: the metrics on a hand-computed set of results, and a whole run via
typer's runner with the real pipeline against the scripted OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from bot.commands.evaluate import app
from bot.config import Settings
from evaluation.posts import PostResult, summarise
from pipeline.config import CredibilityConfig
from testing.fakes.openai_server import FakeLLM, Reply
from testing.scenarios import POST, TIERS, build_index, script_happy_path

runner = CliRunner()


def result(
    ident: str, gold: str | None, predicted: str, confidence: float, **kw: Any
) -> PostResult:
    status = "abstain" if predicted == "abstain" else "reply"
    return PostResult(
        id=ident, status=status, predicted=predicted, gold=gold, confidence=confidence, **kw
    )


def test_metrics_match_a_hand_computed_example() -> None:
    results = [
        result("a", "refuted", "refuted", 0.8, length_ok=True, grounded=True, tiers=["high"]),
        result("b", "refuted", "supported", 0.4, length_ok=False, grounded=True),
        result("c", "supported", "supported", 0.6, length_ok=True, grounded=False),
        result("d", "supported", "abstain", 0.0),
        result("e", None, "misleading", 0.9, length_ok=True, grounded=True),
    ]
    summary = summarise(results)
    assert summary["accuracy"] == 0.5  # a and c right of the four with gold
    # refuted: tp 1, fp 0, fn 1 → 2/3; supported: tp 1, fp 1 (b), fn 1 (d) → 1/2.
    assert summary["macro_f1"] == 0.5833
    assert summary["answered_accuracy"] == 0.6667  # a, c of a, b, c
    assert summary["abstention_rate"] == 0.2
    points = {p["threshold"]: p for p in summary["risk_coverage"]}
    assert points[0.0] == {"threshold": 0.0, "coverage": 0.75, "accuracy": 0.6667, "risk": 0.3333}
    assert points[0.5] == {"threshold": 0.5, "coverage": 0.5, "accuracy": 1.0, "risk": 0.0}
    assert points[0.9] == {"threshold": 0.9, "coverage": 0.0, "accuracy": None, "risk": None}
    assert summary["length_compliance"] == 0.75 and summary["url_grounding"] == 0.75
    assert summary["tiers_cited"] == {"high": 1}


def _judge_answer(body: dict[str, Any]) -> Reply:
    gate = {"passed": True, "reason": "ok"}
    quality = {"rating": "strong", "reason": "ok"}
    return Reply.json(
        {
            "evidence_relevant": gate,
            "represented_correctly": gate,
            "helpful_style": gate,
            "understandable": quality,
            "meaningful": quality,
            "usable": quality,
            "trustworthy": quality,
            "mode": "excellent",
            "reasons": ["sourced and calm"],
            "lessons": [{"phase": "writing", "lesson": "lead with the agency"}],
        }
    )


def test_eval_posts_runs_replay_judges_and_learns_into_a_copy_of_memory(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    build_index(f"sqlite:///{tmp_path / 'factnote.db'}")
    script_happy_path(fake_llm)
    fake_llm.script("judge", _judge_answer)
    fake_llm.script(
        "judge_pairwise",
        Reply.json(
            {
                "understandable": "tie",
                "meaningful": "tie",
                "usable": "tie",
                "trustworthy": "tie",
                "overall": "tie",
                "reason": "equal",
            }
        ),
    )
    fake_llm.script(
        "memory_distill",
        Reply.json(
            {
                "items": [
                    {
                        "phase": "writing",
                        "trigger": "lemon flu throat remedy",
                        "strategy": "Name the health agency first",
                    }
                ]
            }
        ),
    )
    line = POST.model_dump(mode="json", include={"id", "author", "text", "created_at"})
    data = tmp_path / "posts.jsonl"
    rows = [
        {**line, "gold": "refuted", "references": ["Lemon water does not kill flu."]},
        {**line, "id": "p2", "gold": "refuted"},
    ]
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    settings = Settings(
        llm=fake_llm.config(),
        credibility=CredibilityConfig(overrides=TIERS),
        index_path=str(tmp_path / "index.sqlite"),
        database_url=f"sqlite:///{tmp_path / 'factnote.db'}",
    )
    out = tmp_path / "report.json"
    html = tmp_path / "report.html"
    args = ["posts", "--data", str(data), "--judge", "--memory", "learn", "--out", str(out)]
    args += ["--html", str(html)]
    run = runner.invoke(app, args, obj=settings)
    assert run.exit_code == 0, run.output
    assert "accuracy 1.0" in run.stdout
    report = json.loads(out.read_text())
    summary = report["summary"]
    assert summary["accuracy"] == 1.0 and summary["abstention_rate"] == 0.0
    assert summary["judge"]["modes"] == {"excellent": 2}
    assert summary["judge"]["gate_pass_rates"]["helpful_style"] == 1.0
    assert summary["judge"]["pairwise"] == {"tie": 1}
    # The first post's lesson was learned and shown to the second post's writer.
    assert [p["memory_items"] for p in report["posts"]] == [0, 1]
    writer_prompts = [r.messages[-1]["content"] for r in fake_llm.requests_for("write")]
    assert "Name the health agency first" in writer_prompts[-1]
    assert "Name the health agency first" not in writer_prompts[0]
    page = html.read_text()
    assert "Risk-coverage" in page and "Judge: modes" in page and page.count("<svg") == 5
